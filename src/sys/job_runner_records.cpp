// The runner's side of each attempt's records (AttemptRecords writes them): the time it
// counts, and the jobs it counts as failed for a lost record.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpusched::sys {

void JobRunner::record_attempt(const RunningJob& job, JobOutcome outcome, AttemptEnd end)
{
    const auto now = m_clock.now();
    const auto runtime = now - job.started;
    m_report.on_attempt(runtime);
    // The fair share's GPU-seconds, at what it held as it ended (its use may have raised it:
    // its GPUs are still its own); a job that never started has no leader, and held nothing.
    auto& placement = m_scheduler.placement();
    const double held = job.leader != 0 ? placement.gpus_held(job.slots, job.allocation) : 0.0;
    placement.on_attempt_ended(job.gpus_held, std::max(held, job.gpus_held), job.started, now,
                               job.leader != 0);
    if (!m_records.keeps_any()) {
        return; // no record is kept: spare the copy of the command on every job's end
    }
    m_records.write(JoblogRecord{job.id, seconds_since_epoch(job.started_wall),
                                 std::chrono::duration<double>(runtime).count(), outcome.exit_code,
                                 outcome.signal, job.command, job.gpu, end, job.peak_memory,
                                 outcome.out_of_gpu_memory},
                    job.attempt);
}

// The exit status counts each job once: one whose record is lost counts unless it already
// counts as failed (or was interrupted, which --resume runs again anyway).
void JobRunner::count_unrecorded_jobs()
{
    for (const JobId job : m_records.finish()) {
        if (!m_failed_jobs.contains(job) && !m_report.interrupted(job)) {
            m_scheduler.on_record_lost();
        }
    }
}

} // namespace gpusched::sys
