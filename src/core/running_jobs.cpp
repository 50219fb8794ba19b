#include <gpusched/running_jobs.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <stdexcept>

namespace gpusched {
namespace {

constexpr std::chrono::milliseconds k_first_sweep_interval{250};
constexpr std::chrono::milliseconds k_longest_sweep_interval{4'000};
constexpr std::chrono::milliseconds k_leftover_report_delay{1'000};

void earlier(std::optional<RunningJobs::Clock::time_point>& next,
             std::optional<RunningJobs::Clock::time_point> candidate)
{
    if (candidate && (!next || *candidate < *next)) {
        next = candidate;
    }
}

} // namespace

RunningJobs::RunningJobs(ProcessTable& processes, std::chrono::milliseconds kill_after,
                         std::optional<std::chrono::milliseconds> timeout)
    : m_processes(processes), m_kill_after(kill_after), m_timeout(timeout)
{
}

RunningJob& RunningJobs::add(RunningJob job)
{
    if (const auto timeout = job.timeout ? job.timeout : m_timeout) {
        job.terminate_at = job.started + *timeout;
    }
    return m_jobs.emplace_back(std::move(job));
}

RunningJob* RunningJobs::find_leader(ProcessId pid)
{
    const auto found = std::find_if(m_jobs.begin(), m_jobs.end(), [pid](const RunningJob& job) {
        return job.leader == pid && job.shell_running();
    });
    return found == m_jobs.end() ? nullptr : &*found;
}

RunningJob* RunningJobs::find_token(int token)
{
    const auto found = std::find_if(m_jobs.begin(), m_jobs.end(),
                                    [token](const RunningJob& job) { return job.token == token; });
    return found == m_jobs.end() ? nullptr : &*found;
}

RunningJob RunningJobs::take(int token)
{
    const auto found = std::find_if(m_jobs.begin(), m_jobs.end(),
                                    [token](const RunningJob& job) { return job.token == token; });
    if (found == m_jobs.end()) {
        throw std::logic_error(fmt::format("no running job has token {}", token));
    }
    m_processes.forget_token(found->token);
    RunningJob taken = std::move(*found);
    m_jobs.erase(found);
    return taken;
}

void RunningJobs::linger(RunningJob& job, Clock::time_point now)
{
    job.report_at = now + k_leftover_report_delay;
}

std::vector<ProcessInfo> RunningJobs::leftovers(const RunningJob& job)
{
    const JobTrace trace{job.token, job.group()};
    auto found = m_processes.find_processes({&trace, 1});
    return found.empty() ? std::vector<ProcessInfo>{} : std::move(found.front());
}

// A stopped process acts on no signal but SIGKILL until it is continued: a job the terminal
// stopped (SIGTTIN, as it read /dev/tty), or one stopped by hand. So a signal that is to end a
// job is followed by SIGCONT, as Slurm's scancel does: sent after it, the signal is pending
// when the process goes on, and it acts on it at once.
void RunningJobs::signal_group(ProcessId leader, int signal)
{
    m_processes.signal_group(leader, signal);
    if (ends_stopped_work(signal)) {
        m_processes.signal_group(leader, SIGCONT);
    }
}

void RunningJobs::signal_process(ProcessId pid, int signal)
{
    m_processes.signal_process(pid, signal);
    if (ends_stopped_work(signal)) {
        m_processes.signal_process(pid, SIGCONT);
    }
}

bool RunningJobs::ends_stopped_work(int signal)
{
    return signal != SIGKILL && signal != SIGSTOP && signal != SIGCONT;
}

std::vector<ProcessId> RunningJobs::signal_jobs(const std::vector<RunningJob*>& jobs, int signal)
{
    std::vector<JobTrace> traces;
    traces.reserve(jobs.size());
    for (const RunningJob* job : jobs) {
        traces.push_back({job->token, job->group()});
    }
    const auto found =
        jobs.empty() ? std::vector<std::vector<ProcessInfo>>{} : m_processes.find_processes(traces);
    std::vector<ProcessId> signalled;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const RunningJob& job = *jobs[i];
        if (job.shell_running()) {
            signal_group(job.leader, signal);
        }
        for (const auto& process : i < found.size() ? found[i] : std::vector<ProcessInfo>{}) {
            if (job.shell_running() && process.group == job.leader) {
                continue; // the group signal reached it
            }
            if (std::find(signalled.begin(), signalled.end(), process.pid) == signalled.end()) {
                signal_process(process.pid, signal);
                signalled.push_back(process.pid);
            }
        }
    }
    return signalled;
}

void RunningJobs::signal_all(int signal, Clock::time_point now)
{
    std::vector<RunningJob*> jobs;
    for (auto& job : m_jobs) {
        jobs.push_back(&job);
    }
    auto signalled = signal_jobs(jobs, signal);
    // The rest of our children: what jobs that already ended left behind, and what left a
    // job's group and closed its token.
    for (const ProcessId child : m_processes.children()) {
        const bool leads_a_job = find_leader(child) != nullptr;
        if (!leads_a_job &&
            std::find(signalled.begin(), signalled.end(), child) == signalled.end()) {
            signal_process(child, signal);
        }
    }
    if (signal == SIGKILL && !m_killing) {
        m_killing = true;
        m_kill_deadline.reset();
        start_sweeping(now);
    }
}

void RunningJobs::arm_kill_deadline(Clock::time_point now)
{
    if (!m_kill_deadline && !m_killing) {
        m_kill_deadline = now + m_kill_after;
    }
}

void RunningJobs::start_sweeping(Clock::time_point now)
{
    if (!m_next_sweep) {
        m_sweep_interval = k_first_sweep_interval;
        m_next_sweep = now + m_sweep_interval;
    }
}

void RunningJobs::sweep(Clock::time_point now)
{
    if (m_killing) {
        signal_all(SIGKILL, now);
        return;
    }
    std::vector<RunningJob*> killing;
    for (auto& job : m_jobs) {
        if (job.killing) {
            killing.push_back(&job);
        }
    }
    if (killing.empty()) {
        m_next_sweep.reset();
        return;
    }
    signal_jobs(killing, SIGKILL);
}

void RunningJobs::after_reap(Clock::time_point now)
{
    if (m_next_sweep) {
        sweep(now);
    }
}

void RunningJobs::cancel(RunningJob& job, Clock::time_point now)
{
    if (job.cancelled || job.killing) {
        return;
    }
    job.cancelled = true;
    job.terminate_at.reset();
    if (!job.kill_at) {
        job.kill_at = now + m_kill_after;
    }
    signal_jobs({&job}, SIGTERM);
}

void RunningJobs::postpone(Clock::duration stopped)
{
    const auto later = [stopped](std::optional<Clock::time_point>& deadline) {
        if (deadline) {
            *deadline += stopped;
        }
    };
    for (auto& job : m_jobs) {
        job.started += stopped;
        later(job.terminate_at);
        later(job.kill_at);
        later(job.report_at);
    }
    later(m_kill_deadline);
    later(m_next_sweep);
}

std::optional<RunningJobs::Clock::time_point> RunningJobs::next_deadline() const
{
    std::optional<Clock::time_point> next = m_kill_deadline;
    earlier(next, m_next_sweep);
    for (const auto& job : m_jobs) {
        earlier(next, job.terminate_at);
        earlier(next, job.kill_at);
        earlier(next, job.report_at);
    }
    return next;
}

RunningJobs::DueWork RunningJobs::fire(Clock::time_point now)
{
    DueWork due;
    if (m_kill_deadline && now >= *m_kill_deadline) {
        due.kill_deadline_passed = true;
        signal_all(SIGKILL, now);
    }
    std::vector<RunningJob*> to_terminate;
    std::vector<RunningJob*> to_kill;
    for (auto& job : m_jobs) {
        if (job.terminate_at && now >= *job.terminate_at) {
            job.terminate_at.reset();
            job.timed_out = true;
            job.kill_at = now + m_kill_after;
            to_terminate.push_back(&job);
            due.timed_out.push_back(job.token);
        }
        if (job.report_at && now >= *job.report_at) {
            job.report_at.reset();
            due.to_report.push_back(job.token);
        }
        if (job.kill_at && now >= *job.kill_at) {
            job.kill_at.reset();
            job.killing = true;
            to_kill.push_back(&job);
        }
    }
    signal_jobs(to_terminate, SIGTERM);
    if (!to_kill.empty()) {
        signal_jobs(to_kill, SIGKILL);
        start_sweeping(now);
    }
    if (m_next_sweep && now >= *m_next_sweep) {
        sweep(now);
        if (m_next_sweep) {
            m_sweep_interval = std::min(m_sweep_interval * 2, k_longest_sweep_interval);
            m_next_sweep = now + m_sweep_interval;
        }
    }
    return due;
}

} // namespace gpusched
