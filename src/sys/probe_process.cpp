#include <gpusched/sys/probe_process.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/probe_protocol.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/sys/poll_timeout.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace gpusched::sys {
namespace {

constexpr std::size_t k_longest_answer = 1024 * 1024;
// How long a killed probe gets to end before it is left to whoever adopts it: SIGKILL ends
// a process at once unless it is stuck in the kernel, as in a wedged driver, and then no
// wait would help.
constexpr int k_reap_grace_ms = 1000;

std::vector<char*> pointers_to(std::vector<std::string>& strings)
{
    std::vector<char*> pointers;
    for (auto& string : strings) {
        pointers.push_back(string.data());
    }
    pointers.push_back(nullptr);
    return pointers;
}

// The child between fork and exec: system calls only. It dies with its parent, leads its own
// process group, and answers on `answer_fd`; an exec failure is answered there too, in the
// probe protocol's error line.
[[noreturn]] void become_probe(pid_t parent, int answer_fd, const sigset_t& mask,
                               const char* program, char* const* argv, char* const* envp,
                               const std::string& cannot_run)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(ESRCH); // the parent died before the line above
    }
    setpgid(0, 0);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &default_action, nullptr); // ignored by gpusched, not by its children
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(answer_fd, STDOUT_FILENO) < 0) {
        _exit(127);
    }
    close_range(STDERR_FILENO + 1, ~0U, 0);
    execve(program, argv, envp);
    const char* why = strerrordesc_np(errno);
    const std::array<iovec, 3> parts{{{const_cast<char*>(cannot_run.data()), cannot_run.size()},
                                      {const_cast<char*>(why), std::strlen(why)},
                                      {const_cast<char*>("\n"), 1}}};
    (void)!writev(STDOUT_FILENO, parts.data(), parts.size()); // nothing more to do if it fails
    _exit(127);
}

} // namespace

ProbeProcess::ProbeProcess(const ProbeCommand& command, const std::vector<std::string>& ids,
                           const sigset_t& child_mask)
    : m_name(command.program), m_timeout(command.timeout)
{
    std::vector<std::string> args = command.args;
    args.insert(args.end(), ids.begin(), ids.end());
    if (command.args.size() > 1) {
        m_name = fmt::format("{} {}", command.args[0], command.args[1]);
    }
    const JobEnvironment environment(environ);
    std::vector<std::string> variables = environment.base();
    const auto argv = pointers_to(args);
    const auto envp = pointers_to(variables);
    std::string cannot_run = probe_error_line(fmt::format("cannot run {}: ", command.program));
    cannot_run.pop_back(); // the child adds why, then the newline

    std::array<int, 2> ends{};
    if (pipe2(ends.data(), O_CLOEXEC) != 0) {
        throw_errno("pipe2");
    }
    m_pipe.reset(ends[0]);
    const UniqueFd write_end(ends[1]);
    if (fcntl(m_pipe.get(), F_SETFL, O_NONBLOCK) != 0) {
        throw_errno("fcntl O_NONBLOCK");
    }
    const pid_t parent = getpid();
    m_pid = fork();
    if (m_pid < 0) {
        throw_errno(fmt::format("fork {}", m_name));
    }
    if (m_pid == 0) {
        become_probe(parent, write_end.get(), child_mask, command.program.c_str(), argv.data(),
                     envp.data(), cannot_run);
    }
    // Also here, so that a kill of the group cannot come before the child has made it.
    setpgid(m_pid, m_pid);
    m_deadline = Clock::now() + m_timeout;
}

ProbeProcess::~ProbeProcess()
{
    if (m_reaped) {
        return;
    }
    kill();
    if (try_reap()) {
        return;
    }
    const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, m_pid, 0)));
    if (pidfd) {
        pollfd ended{pidfd.get(), POLLIN, 0};
        while (poll(&ended, 1, k_reap_grace_ms) < 0 && errno == EINTR) {
        }
    }
    try_reap();
}

void ProbeProcess::on_readable()
{
    std::array<char, 16384> chunk{};
    const auto got = ::read(m_pipe.get(), chunk.data(), chunk.size());
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (got <= 0) {
        m_pipe.reset(); // the end, or a pipe that cannot be read, which ends the answer too
        return;
    }
    m_output.append(chunk.data(), static_cast<std::size_t>(got));
    if (m_output.size() > k_longest_answer) {
        m_too_long = true;
        m_pipe.reset();
        kill();
    }
}

bool ProbeProcess::on_exit(pid_t pid, int wait_status)
{
    if (m_reaped || pid != m_pid) {
        return false;
    }
    m_reaped = true;
    m_wait_status = wait_status;
    return true;
}

bool ProbeProcess::try_reap()
{
    if (m_reaped) {
        return true;
    }
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(m_pid, &status, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (got == m_pid) {
        on_exit(m_pid, status);
    }
    return m_reaped;
}

void ProbeProcess::kill()
{
    // A reaped child's pid, and so its group's, may already be someone else's.
    if (!m_reaped) {
        m_killed = true;
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
    }
}

std::optional<ProbeAnswer> ProbeProcess::answer() const
{
    if (!m_reaped || (m_pipe && !m_killed)) {
        return std::nullopt;
    }
    if (m_too_long) {
        return ProbeAnswer{{},
                           fmt::format("{} answered more than {} bytes", m_name, k_longest_answer)};
    }
    if (WIFSIGNALED(m_wait_status)) {
        return ProbeAnswer{
            {}, fmt::format("{} was killed by signal {}", m_name, WTERMSIG(m_wait_status))};
    }
    return ProbeAnswer{m_output, {}};
}

std::string ProbeProcess::timeout_problem() const
{
    return fmt::format("{} did not answer within {} ms", m_name, m_timeout.count());
}

ProbeAnswer wait_for_answer(ProbeProcess& probe, SignalChannel& signals)
{
    std::vector<int> later; // SIGUSR1, say: the run it concerns has not started yet
    const auto deliver_later = [&later] {
        for (const int signal : later) {
            raise(signal);
        }
    };
    while (true) {
        if (auto answer = probe.answer()) {
            deliver_later();
            return std::move(*answer);
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(probe.deadline() -
                                                                       ProbeProcess::Clock::now());
        if (left.count() <= 0) {
            probe.kill(); // and reaped as it goes
            deliver_later();
            return ProbeAnswer{{}, probe.timeout_problem()};
        }
        std::array<pollfd, 2> fds{{{signals.fd(), POLLIN, 0}, {probe.fd(), POLLIN, 0}}};
        const nfds_t count = probe.fd() >= 0 ? 2 : 1;
        if (poll(fds.data(), count, poll_timeout(left)) < 0 && errno != EINTR) {
            throw_errno("poll");
        }
        for (const int signal : signals.take_pending()) {
            if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
                spdlog::warn("{} while waiting for {}: stopping", signal_name(signal),
                             probe.name());
                probe.kill();
                throw Interrupted(signal);
            }
            if (signal != SIGCHLD) {
                later.push_back(signal);
            }
        }
        if (count == 2 && fds[1].revents != 0) {
            probe.on_readable();
        }
        probe.try_reap();
    }
}

} // namespace gpusched::sys
