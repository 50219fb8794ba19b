// The runner's stop rules: passing a signal on to the jobs, the kill deadline, --timeout, and
// what the jobs leave behind once a stop has come to SIGKILL.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/sys/process_tree.hpp>

#include <spdlog/spdlog.h>

#include <csignal>

namespace gpusched::sys {
namespace {

std::string signal_name(int signal)
{
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

} // namespace

void JobRunner::signal_jobs(int signal)
{
    if (signal == SIGKILL) {
        m_killing = true;
    }
    for (const auto& [pid, job] : m_running) {
        m_stopping_groups.insert(pid);
    }
    for (const pid_t group : m_stopping_groups) {
        kill(-group, signal);
    }
    // Descendants that left their job's process group (setsid) are still our children.
    for (const pid_t child : direct_children()) {
        kill(child, signal);
    }
}

// Once the stop has come to SIGKILL, whatever the jobs leave comes back to us as they die
// (we are their subreaper: a process's orphans are ours before its SIGCHLD reaches us), and
// is killed at once, so that a chain of setsid processes cannot outlast the stop.
void JobRunner::kill_adopted()
{
    if (!m_killing) {
        return;
    }
    for (const pid_t child : direct_children()) {
        kill(child, SIGKILL);
    }
}

void JobRunner::handle_signals()
{
    for (const int signal : m_signals.take_pending()) {
        // SIGCHLD is reaped below, once for any number of coalesced ones. (SIGPIPE is
        // ignored from the start: a closed stderr must not kill gpusched and orphan its jobs.)
        if (signal == SIGCHLD) {
            continue;
        }
        if (signal == SIGUSR1) {
            spdlog::info("SIGUSR1: reading no more input{}; {} jobs running",
                         m_input.has_unrepeatable_input()
                             ? ", but what was already written to a pipe or FIFO still runs"
                             : "",
                         m_scheduler.running_count());
        } else if (m_scheduler.stopping()) {
            spdlog::warn("{} again: killing every job now", signal_name(signal));
        } else {
            spdlog::warn(
                "{}: starting no more jobs; passing it on to {} running jobs, SIGKILL in {}",
                signal_name(signal), m_scheduler.running_count(),
                format_duration(m_options.kill_after));
        }
        stop_run(signal);
    }
    reap_children();
}

void JobRunner::stop_run(int signal)
{
    // Whatever the signal, what was already written to a pipe is taken in now, to be run
    // (a drain) or named (a stop), and nothing is read after it.
    m_input.stop_reading();
    apply(m_scheduler.on_signal(signal));
    if (m_scheduler.stopping() && m_has_children && !m_kill_deadline) {
        // No job is running, but processes that finished jobs left behind are: they get
        // the same signal and the same grace period.
        signal_jobs(signal);
        m_kill_deadline = Clock::now() + m_options.kill_after;
    }
}

void JobRunner::fire_due_timers()
{
    const auto now = Clock::now();
    if (const auto input = m_input.next_deadline(); input && now >= *input) {
        m_input.on_time(now);
    }
    if (const auto check = next_busy_check(); check && now >= *check) {
        check_busy_gpus();
    }
    if (m_kill_deadline && now >= *m_kill_deadline) {
        m_kill_deadline.reset();
        apply(m_scheduler.on_kill_timer());
        if (m_has_children) {
            signal_jobs(SIGKILL);
        }
    }
    while (!m_job_timers.empty() && m_job_timers.begin()->first <= now) {
        const JobTimer timer = m_job_timers.begin()->second;
        m_job_timers.erase(m_job_timers.begin());
        const auto pid = m_pid_of.find(timer.job);
        if (pid == m_pid_of.end() || m_running.at(pid->second).attempt != timer.attempt) {
            continue; // that attempt has already ended
        }
        auto& job = m_running.at(pid->second);
        if (timer.signal == SIGTERM) {
            spdlog::warn("job {} on GPU {} passed --timeout: {}, SIGKILL in {}", job.id, job.gpu,
                         signal_name(SIGTERM), format_duration(m_options.kill_after));
            job.timed_out = true;
            m_job_timers.emplace(now + m_options.kill_after,
                                 JobTimer{job.id, job.attempt, SIGKILL});
        }
        kill(-pid->second, timer.signal);
    }
}

} // namespace gpusched::sys
