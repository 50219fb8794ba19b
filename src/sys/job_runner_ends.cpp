// How a job ends: its shell is reaped and recorded, and its GPUs go back to the pool once
// nothing it left behind runs (see RunningJobs for the rules that stop what it left).
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/out_of_memory.hpp>

#include <spdlog/spdlog.h>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <vector>

namespace gpusched::sys {

void JobRunner::reap_children()
{
    bool reaped_any = false;
    while (const auto reaped = m_processes.reap()) {
        if (reaped->stopped) {
            on_child_stopped(reaped->pid, reaped->signal);
            continue;
        }
        reaped_any = true;
        if (m_usage_watch && m_usage_watch->on_child_exit(
                                 reaped->pid, W_EXITCODE(reaped->exit_code, reaped->signal))) {
            continue;
        }
        const RunningJob* job = m_jobs.find_leader(reaped->pid);
        if (job == nullptr) {
            spdlog::debug("reaped process {}, left behind by a job", reaped->pid);
            continue;
        }
        const JobOutcome outcome{reaped->exit_code, reaped->signal};
        if (!hold_end(*job, outcome)) {
            on_shell_exit(reaped->pid, outcome);
        }
    }
    if (!reaped_any) {
        return;
    }
    m_jobs.after_reap(m_clock.now());
    // What an ended job left in its group and that closed its token comes back to us when
    // its parent dies, so the last of it to end is a child of ours: look again now.
    std::vector<int> gone;
    for (auto& job : m_jobs.jobs()) {
        if (!job.shell_running() && nothing_left_of(job)) {
            gone.push_back(job.token);
        }
    }
    for (const int token : gone) {
        on_leftovers_gone(token);
    }
}

namespace {

// How long the end of a job killed by a stop signal from elsewhere waits for one of our own.
// Slurm ending a job step, or systemd a unit (KillMode=control-group), signals each process of
// it in turn: a job may die of its SIGTERM, and be reaped, before ours arrives. Its end is then
// the stop's, to be given back (a worker) or run again (--resume), not a failure of its own.
constexpr std::chrono::milliseconds k_stop_signal_grace{500};

bool stop_signal(int signal)
{
    return signal == SIGTERM || signal == SIGINT || signal == SIGHUP;
}

} // namespace

bool JobRunner::hold_end(const RunningJob& job, JobOutcome outcome)
{
    if (!stop_signal(outcome.signal) || m_scheduler.interrupting() || job.cancelled ||
        job.timed_out) {
        return false; // not a stop's, or one of ours: judged now
    }
    spdlog::debug("job {} was killed by {}: its end is judged in {} (a stop of the run may "
                  "follow)",
                  job.id, signal_name(outcome.signal), format_duration(k_stop_signal_grace));
    m_held_ends.push_back({job.leader, outcome, m_clock.now() + k_stop_signal_grace});
    return true;
}

// Ends held by hold_end, once their moment is over or a stop of the run began.
void JobRunner::judge_held_ends()
{
    const auto now = m_clock.now();
    const bool stopped = m_scheduler.interrupting();
    std::vector<HeldEnd> due;
    std::erase_if(m_held_ends, [&](const HeldEnd& held) {
        if (stopped || now >= held.until) {
            due.push_back(held);
            return true;
        }
        return false;
    });
    for (const auto& held : due) {
        on_shell_exit(held.leader, held.outcome);
    }
}

std::optional<JobRunner::Clock::time_point> JobRunner::next_held_end() const
{
    if (m_held_ends.empty()) {
        return std::nullopt;
    }
    return m_held_ends.front().until; // held in the order they ended, each as long
}

// A job's shell was stopped by a signal. Ours (SIGSTOP, Ctrl-Z) is said already; the
// terminal's (SIGTTIN, SIGTTOU: the job read or set up the terminal, which only its foreground
// group may) or anybody's SIGTSTP would leave it stopped, its GPU taken, with nothing said:
// it is named at once, with what to do.
void JobRunner::on_child_stopped(ProcessId pid, int signal)
{
    const RunningJob* job = m_jobs.find_leader(pid);
    if (job == nullptr || signal == SIGSTOP) {
        return;
    }
    const bool terminal = signal == SIGTTIN || signal == SIGTTOU;
    spdlog::warn("job {} on GPU {} is stopped by {}{}; it holds its GPU until it goes on: "
                 "kill -CONT {} resumes it, and a stop (Ctrl-C, gpusched cancel) ends it at "
                 "once: {}",
                 job->id, job->gpu, signal_name(signal),
                 terminal ? ", as it used the terminal (only the foreground may: give it its "
                            "input from a file, or run it with setsid)"
                          : "",
                 pid, shorten_command(job->command));
}

// True once nothing of `job` runs: no process holds its token or is in its group. Called
// only once its shell is reaped (its group may then empty at any time).
bool JobRunner::nothing_left_of(RunningJob& job)
{
    if (!job.token_closed && m_processes.released(job.token)) {
        job.token_closed = true;
    }
    if (!job.group_gone && !m_processes.group_exists(job.leader)) {
        job.group_gone = true;
    }
    return job.token_closed && job.group_gone;
}

// A job's shell has ended: its attempt is recorded and counted now. Its GPUs go back to the
// pool only once nothing of it runs: a background process it left (`sleep 60 &`, a setsid
// child that survived --timeout, what Python's subprocess started) still uses them.
void JobRunner::on_shell_exit(ProcessId leader, JobOutcome outcome)
{
    RunningJob& job = *m_jobs.find_leader(leader);
    outcome.timed_out = job.timed_out;
    // Where its output is kept, what it printed last says whether it ran out of GPU memory.
    constexpr std::size_t k_tail_read = 64 * 1024;
    if (!outcome.succeeded() && !job.timed_out && m_options.output_files) {
        outcome.out_of_gpu_memory =
            says_gpu_out_of_memory(m_options.output_files->tail(job.id, job.attempt, k_tail_read));
    }
    job.outcome = outcome;
    job.peak_memory = m_scheduler.placement().memory().peak(job.allocation);
    // A job cancelled before a stop of the run is cancelled, not interrupted: nothing runs it
    // again.
    const AttemptEnd end = job.timed_out                                  ? AttemptEnd::timeout
                           : m_scheduler.interrupting() && !job.cancelled ? AttemptEnd::interrupted
                                                                          : AttemptEnd::by_itself;
    if (end == AttemptEnd::interrupted) {
        m_report.on_interrupted(job.id, job.gpu, job.command, job.replayable);
    }
    record_attempt(job, outcome, end);
    const auto took = format_duration(m_clock.now() - job.started);
    const auto& gpu = job.gpu;
    if (end == AttemptEnd::interrupted) {
        spdlog::warn("job {} interrupted on GPU {}: {} after {}: {}", job.id, gpu,
                     describe_outcome(outcome), took, shorten_command(job.command));
    } else if (job.cancelled) {
        spdlog::warn("job {} cancelled on GPU {}: {} after {}: {}", job.id, gpu,
                     describe_outcome(outcome), took, shorten_command(job.command));
    } else if (outcome.succeeded()) {
        spdlog::info("job {} finished on GPU {}: {} after {}: {}", job.id, gpu,
                     describe_outcome(outcome), took, shorten_command(job.command));
    } else {
        spdlog::warn("job {} failed on GPU {}: {}{} after {}: {}", job.id, gpu,
                     describe_outcome(outcome), job.timed_out ? " (timed out)" : "", took,
                     shorten_command(job.command));
    }
    if (!nothing_left_of(job)) {
        m_jobs.linger(job, m_clock.now());
        const RunningJob lingering = job;
        after_attempt(lingering, outcome, m_scheduler.on_job_exit(lingering.id, outcome, true));
        return;
    }
    const RunningJob ended = m_jobs.take(job.token);
    lease_holders_changed(ended.slots);
    after_attempt(ended, outcome, m_scheduler.on_job_exit(ended.id, outcome));
}

void JobRunner::on_token_released(int token)
{
    RunningJob* job = m_jobs.find_token(token);
    if (job == nullptr) {
        return;
    }
    job->token_closed = true;
    if (!job->shell_running() && nothing_left_of(*job)) {
        on_leftovers_gone(token);
    }
}

void JobRunner::on_leftovers_gone(int token)
{
    const RunningJob ended = m_jobs.take(token);
    spdlog::info("GPU {} is free again: what job {} left behind has ended", ended.gpu, ended.id);
    lease_holders_changed(ended.slots);
    apply(m_scheduler.on_job_released(ended.id, ended.attempt));
}

// Leftovers still there a moment after their job's shell ended are named, once.
void JobRunner::report_leftovers(int token)
{
    const RunningJob* job = m_jobs.find_token(token);
    if (job == nullptr) {
        return;
    }
    const auto left = m_jobs.leftovers(*job);
    if (left.empty()) {
        return;
    }
    spdlog::warn("job {} left {} running on GPU {}: the GPU takes no other job until {}", job->id,
                 describe_processes(left), job->gpu,
                 m_options.timeout ? "they end or --timeout stops them" : "they end");
}

} // namespace gpusched::sys
