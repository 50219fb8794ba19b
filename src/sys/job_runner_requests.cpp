// What a queue asks of a worker's runner while it runs: stop one job for good (`gpusched
// cancel`), start nothing new on some GPUs (`gpusched pause --gpu`), stop (`gpusched worker
// --stop`).
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>

#include <spdlog/spdlog.h>

#include <csignal>

namespace gpusched::sys {

void JobRunner::take_input_requests()
{
    auto requests = m_requests.take_requests();
    const auto now = m_clock.now();
    for (const JobId id : requests.cancel) {
        for (auto& job : m_jobs.jobs()) {
            if (job.id != id || !job.shell_running() || job.cancelled) {
                continue;
            }
            spdlog::info("job {} on GPU {} cancelled: SIGTERM, SIGKILL in {} if still running", id,
                         job.gpu, format_duration(m_options.kill_after));
            m_scheduler.on_job_cancelled(id);
            m_jobs.cancel(job, now);
            m_report.changed();
        }
    }
    if (requests.stop) {
        // As the signal would: the same path, the same messages after this one.
        const int signal = *requests.stop ? SIGTERM : SIGUSR1;
        spdlog::info("asked to stop (gpusched worker --stop{}): {}", *requests.stop ? " --now" : "",
                     *requests.stop ? "stopping the running jobs, which go back to the queue"
                                    : "finishing the running jobs, starting none");
        if (!m_scheduler.stopping()) { // a second stop would mean SIGKILL
            stop_run(signal);
        }
    }
    if (requests.paused_gpus) {
        const auto& pool = m_scheduler.pool();
        for (GpuSlot slot = 0; slot < pool.size(); ++slot) {
            const bool paused = requests.paused_gpus->contains(pool.id(slot));
            if (paused != pool.paused(slot)) {
                spdlog::info("GPU {} {}", pool.id(slot),
                             paused ? "paused: no new job starts there" : "resumed");
                apply(m_scheduler.on_gpu_paused(slot, paused));
            }
        }
    }
}

} // namespace gpusched::sys
