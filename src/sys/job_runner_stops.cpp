// The runner's side of the stop rules (RunningJobs holds them): signals to gpusched (Ctrl-Z
// apart: job_runner_suspend.cpp), the kill deadline, --timeout, leftovers due to be named,
// the end of a fork limit's back-off.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/job_messages.hpp>

#include <spdlog/spdlog.h>

#include <csignal>

namespace gpusched::sys {

void JobRunner::handle_signals()
{
    for (const int signal : m_signals.take_pending()) {
        // SIGCHLD: children are reaped after every wait, once for any number of coalesced
        // ones. (SIGPIPE is ignored from the start: a closed stderr must not kill gpusched and
        // orphan its jobs.)
        if (signal == SIGCHLD) {
            continue;
        }
        if (signal == SIGTSTP) {
            suspend();
            continue;
        }
        if (signal == SIGCONT) {
            on_continued();
            continue;
        }
        if (signal == SIGWINCH) {
            if (m_options.progress) {
                m_options.progress->redraw(); // on the new bottom row
            }
            continue;
        }
        if (signal == SIGUSR1) {
            spdlog::info("SIGUSR1: reading no more input{}; {} running",
                         m_source.has_unrepeatable_input()
                             ? ", but what was already written to a pipe or FIFO still runs"
                             : "",
                         counted(m_scheduler.running_count(), "job"));
        } else if (m_scheduler.stopping()) {
            spdlog::warn("{} again: killing every job now", signal_name(signal));
        } else {
            spdlog::warn("{}: starting no more jobs; passing it on to {}, SIGKILL in {}",
                         signal_name(signal), counted(m_scheduler.running_count(), "running job"),
                         format_duration(m_options.kill_after));
        }
        stop_run(signal);
    }
}

void JobRunner::stop_run(int signal)
{
    // Whatever the signal, what was already written to a pipe is taken in now, to be run
    // (a drain) or named (a stop), and nothing is read after it.
    m_source.stop_reading();
    apply(m_scheduler.on_signal(signal));
    if (m_scheduler.stopping() && m_jobs.empty() && !m_processes.children().empty()) {
        // No job is running, but processes that finished jobs left behind (and that closed
        // their token) are: they get the same signal and the same grace period.
        m_jobs.signal_all(signal, m_clock.now());
        m_jobs.arm_kill_deadline(m_clock.now());
    }
}

void JobRunner::fire_due_timers()
{
    judge_held_ends();
    const auto now = m_clock.now();
    if (const auto input = m_source.next_deadline(); input && now >= *input) {
        m_source.on_time(now);
    }
    if (const auto check = next_usage_look(); check && now >= *check) {
        check_gpu_usage();
    }
    if (m_spawn_backoff.due(now)) {
        apply(m_scheduler.on_spawn_retry());
    }
    const auto due = m_jobs.fire(now);
    for (const int token : due.timed_out) {
        const RunningJob& job = *m_jobs.find_token(token);
        spdlog::warn("{} on GPU {} passed --timeout: SIGTERM, SIGKILL in {}",
                     job.shell_running() ? fmt::format("job {}", job.id)
                                         : fmt::format("what job {} left running", job.id),
                     job.gpu, format_duration(m_options.kill_after));
    }
    for (const int token : due.to_report) {
        report_leftovers(token);
    }
}

} // namespace gpusched::sys
