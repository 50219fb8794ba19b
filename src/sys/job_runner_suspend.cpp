// Ctrl-Z: gpusched stops with its jobs, and `fg` (SIGCONT) resumes them all. The time stopped
// is not the jobs': their run time (the job log's JobRuntime) leaves it out, and it counts
// against no --timeout and no kill deadline.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>

#include <spdlog/spdlog.h>

#include <csignal>

namespace gpusched::sys {

// The terminal sends SIGTSTP to its foreground process group, which is gpusched alone: each
// job runs in a group of its own. So the jobs are stopped here, with what they left behind,
// by the rules that stop them on SIGTERM. They get SIGSTOP rather than SIGTSTP: a job may
// catch or ignore SIGTSTP, and the kernel drops it for a process whose group has no parent in
// the session (what left a job's group with setsid); a job half stopped would run on against
// a clock that no longer counts.
void JobRunner::suspend()
{
    const auto stopped_at = m_clock.now();
    m_jobs.signal_all(SIGSTOP, stopped_at);
    if (m_options.progress) {
        m_options.progress->release(); // the shell's screen while gpusched is stopped
    }
    spdlog::info("SIGTSTP: {} job{} stopped with gpusched; fg resumes them", m_jobs.size(),
                 m_jobs.size() == 1 ? "" : "s");
    m_signals.stop_self();
    const auto stopped = m_clock.now() - stopped_at;
    m_jobs.postpone(stopped);
    if (m_usage_watch) {
        m_usage_watch->postpone(stopped);
    }
    m_jobs.signal_all(SIGCONT, m_clock.now());
    spdlog::info("{} job{} resumed after {} stopped", m_jobs.size(), m_jobs.size() == 1 ? "" : "s",
                 format_duration(stopped));
    m_report.changed();
}

// SIGCONT also reaches gpusched when it was stopped some other way (SIGSTOP, a debugger), or
// after suspend() had resumed the jobs: the jobs are continued, which costs nothing where they
// run, and the status line is drawn again (or not, when `bg` left gpusched in the
// background).
void JobRunner::on_continued()
{
    m_jobs.signal_all(SIGCONT, m_clock.now());
    if (m_options.progress) {
        m_options.progress->redraw();
    }
}

} // namespace gpusched::sys
