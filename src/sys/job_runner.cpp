#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/sys/process_tree.hpp>
#include <gpusched/sys/system_error.hpp>

#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace gpusched::sys {
namespace {

using Clock = std::chrono::steady_clock;

JobOutcome outcome_of(int wait_status)
{
    if (WIFSIGNALED(wait_status)) {
        return {0, WTERMSIG(wait_status)};
    }
    return {WEXITSTATUS(wait_status), 0};
}

std::string signal_name(int signal)
{
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

} // namespace

JobRunner::JobRunner(Scheduler& scheduler, InputReader& input, SignalChannel& signals,
                     const JobSpawner& spawner, const JobEnvironment& environment,
                     std::chrono::milliseconds kill_after)
    : m_scheduler(scheduler), m_input(input), m_signals(signals), m_spawner(spawner),
      m_environment(environment), m_kill_after(kill_after)
{
}

int JobRunner::run()
{
    m_started = Clock::now();
    become_child_subreaper();
    take_input();
    while (!finished()) {
        wait_for_events();
        take_input();
    }
    report_unstarted();
    if (m_has_children && !m_scheduler.stopping()) {
        spdlog::warn("background processes started by jobs are still running ({}); they are "
                     "left to run",
                     direct_children().size());
    }
    const auto& counts = m_scheduler.counts();
    spdlog::info("{} jobs: {} succeeded, {} failed, in {}", counts.succeeded + counts.failed,
                 counts.succeeded, counts.failed, format_duration(Clock::now() - m_started));
    return m_scheduler.exit_status();
}

// After a stop, gpusched also waits for what the jobs left behind (their background
// processes come back to it as a subreaper), so nothing it started outlives it.
bool JobRunner::finished() const
{
    return m_scheduler.done() && !(m_scheduler.stopping() && m_has_children);
}

void JobRunner::wait_for_events()
{
    std::array<pollfd, 2> fds{};
    nfds_t count = 0;
    fds[count++] = {m_signals.fd(), POLLIN, 0};
    const int input_fd = m_scheduler.wants_input() ? m_input.fd_to_poll() : -1;
    if (input_fd >= 0) {
        fds[count++] = {input_fd, POLLIN, 0};
    }
    int timeout_ms = -1;
    if (m_kill_deadline) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(*m_kill_deadline - Clock::now());
        timeout_ms = static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
    }
    const int ready = poll(fds.data(), count, timeout_ms);
    if (ready < 0) {
        if (errno == EINTR) {
            return;
        }
        throw_errno("poll");
    }
    if (fds[0].revents != 0) {
        handle_signals();
    }
    if (count > 1 && fds[1].revents != 0) {
        m_input.read_some();
    }
    if (m_kill_deadline && Clock::now() >= *m_kill_deadline) {
        on_kill_deadline();
    }
}

void JobRunner::take_input()
{
    while (m_scheduler.wants_input()) {
        auto input = m_input.next_line();
        if (!input) {
            if (m_input.finished()) {
                apply(m_scheduler.on_input_end());
            }
            return;
        }
        const JobId id = m_next_job++;
        if (input->line.has_nul) {
            spdlog::error("{}:{}: job {} not run: the command contains a NUL byte", input->source,
                          input->line.first_line, id);
            m_scheduler.on_rejected_command();
            continue;
        }
        apply(m_scheduler.on_command(Command{id, std::move(input->line.text)}));
    }
}

void JobRunner::apply(std::vector<Action> actions)
{
    for (auto& action : actions) {
        if (auto* job = std::get_if<StartJob>(&action)) {
            start(*job);
        } else if (auto* signal = std::get_if<SignalRunningJobs>(&action)) {
            signal_jobs(signal->signal);
        } else if (std::holds_alternative<ArmKillTimer>(action)) {
            m_kill_deadline = Clock::now() + m_kill_after;
        }
    }
}

void JobRunner::start(StartJob& job)
{
    const auto& gpu = m_scheduler.pool().id(job.gpu);
    JobEnvironment::JobVariables variables;
    const auto envp = m_environment.for_job(job.command.id, gpu, variables);
    const auto started = Clock::now();
    const SpawnResult spawned = m_spawner.spawn(job.command.text, envp.data());
    if (spawned.error != 0) {
        spdlog::error("job {} could not start on GPU {}: {}: {}: {}", job.command.id, gpu,
                      m_spawner.shell(), std::strerror(spawned.error),
                      shorten_command(job.command.text));
        apply(m_scheduler.on_spawn_failure(job.command.id));
        return;
    }
    spdlog::info("job {} started on GPU {}: {}", job.command.id, gpu,
                 shorten_command(job.command.text));
    spdlog::debug("job {} is process group {}", job.command.id, spawned.pid);
    m_has_children = true;
    m_running.emplace(spawned.pid,
                      RunningJob{job.command.id, job.gpu, std::move(job.command.text), started});
}

void JobRunner::signal_jobs(int signal)
{
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

void JobRunner::reap_children()
{
    while (true) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0) {
            return;
        }
        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == ECHILD) {
                m_has_children = false;
                return;
            }
            throw_errno("waitpid");
        }
        const auto found = m_running.find(pid);
        if (found == m_running.end()) {
            spdlog::debug("reaped process {}, left behind by a job", pid);
            continue;
        }
        RunningJob job = std::move(found->second);
        m_running.erase(found);
        const JobOutcome outcome = outcome_of(status);
        const auto took = format_duration(Clock::now() - job.started);
        const auto& gpu = m_scheduler.pool().id(job.gpu);
        if (outcome.succeeded()) {
            spdlog::info("job {} finished on GPU {}: {} after {}: {}", job.id, gpu,
                         describe_outcome(outcome), took, shorten_command(job.command));
        } else {
            spdlog::warn("job {} failed on GPU {}: {} after {}: {}", job.id, gpu,
                         describe_outcome(outcome), took, shorten_command(job.command));
        }
        apply(m_scheduler.on_job_exit(job.id, outcome));
    }
}

void JobRunner::handle_signals()
{
    for (const int signal : m_signals.take_pending()) {
        // SIGCHLD is reaped below, once for any number of coalesced ones; SIGPIPE is only
        // blocked, so that a closed stderr cannot kill gpusched and orphan its jobs.
        if (signal == SIGCHLD || signal == SIGPIPE) {
            continue;
        }
        if (signal == SIGUSR1) {
            spdlog::info("SIGUSR1: reading no more input; waiting for {} running jobs",
                         m_scheduler.running_count());
        } else if (m_scheduler.stopping()) {
            spdlog::warn("{} again: killing every job now", signal_name(signal));
        } else {
            spdlog::warn(
                "{}: starting no more jobs; passing it on to {} running jobs, SIGKILL in {}",
                signal_name(signal), m_scheduler.running_count(), format_duration(m_kill_after));
        }
        apply(m_scheduler.on_signal(signal));
        if (m_scheduler.stopping() && m_has_children && !m_kill_deadline) {
            // No job is running, but processes that finished jobs left behind are: they get
            // the same signal and the same grace period.
            signal_jobs(signal);
            m_kill_deadline = Clock::now() + m_kill_after;
        }
    }
    reap_children();
}

void JobRunner::on_kill_deadline()
{
    m_kill_deadline.reset();
    apply(m_scheduler.on_kill_timer());
    if (m_has_children) {
        signal_jobs(SIGKILL);
    }
}

void JobRunner::report_unstarted()
{
    auto unstarted = m_scheduler.take_unstarted();
    auto buffered = m_input.take_buffered();
    const auto total = unstarted.size() + buffered.size();
    if (total == 0) {
        return;
    }
    spdlog::warn("{} commands read from the input were not started", total);
    // What came from a pipe cannot be read again: name each command so none is lost.
    if (!m_input.has_unrepeatable_input()) {
        return;
    }
    for (const auto& command : unstarted) {
        spdlog::warn("not started: job {}: {}", command.id, command.text);
    }
    for (const auto& input : buffered) {
        spdlog::warn("not started: {}:{}: {}", input.source, input.line.first_line,
                     input.line.text);
    }
}

} // namespace gpusched::sys
