#include "pseudo_terminal.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gpusched::testing {

termios PseudoTerminal::modes() const
{
    termios now{};
    if (tcgetattr(m_master, &now) != 0) {
        throw std::runtime_error(fmt::format("tcgetattr: {}", std::strerror(errno)));
    }
    return now;
}

PseudoTerminal::PseudoTerminal(const TempDir& dir, TerminalOptions options)
    : m_screen(options.rows, options.columns)
{
    // Everything the children need is made before fork: between fork and exec they only
    // make system calls.
    std::vector<std::string> args = {binary().string()};
    args.insert(args.end(), options.args.begin(), options.args.end());
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = {"GPUSCHED_LOCK_DIR=" + (dir / "leases").string(),
                                            "TERM=xterm"};
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view variable = *entry;
        if (variable.substr(0, 18) != "GPUSCHED_LOCK_DIR=" && variable.substr(0, 5) != "TERM=") {
            env_strings.emplace_back(variable);
        }
    }
    std::vector<char*> envp;
    for (auto& variable : env_strings) {
        envp.push_back(variable.data());
    }
    envp.push_back(nullptr);
    const std::string stdin_path = options.stdin_path ? options.stdin_path->string() : "";

    std::array<int, 2> told{}; // the session leader tells gpusched's pid
    if (pipe2(told.data(), O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe2 failed");
    }
    winsize size{};
    size.ws_row = static_cast<unsigned short>(options.rows);
    size.ws_col = static_cast<unsigned short>(options.columns);
    m_shell = forkpty(&m_master, nullptr, nullptr, &size);
    if (m_shell < 0) {
        throw std::runtime_error(fmt::format("forkpty: {}", std::strerror(errno)));
    }
    if (m_shell == 0) {
        // The session leader, as a shell: gpusched gets a group of its own and the terminal.
        close(told[0]);
        const pid_t child = fork();
        if (child == 0) {
            setpgid(0, 0);
            // Started once it has the terminal, as a shell's foreground job: a read of the
            // terminal before that would stop it (SIGTTIN).
            while (tcgetpgrp(STDOUT_FILENO) != getpid()) {
                usleep(1000);
            }
            if (!stdin_path.empty()) {
                const int in = open(stdin_path.c_str(), O_RDONLY);
                dup2(in, STDIN_FILENO);
                close(in);
            }
            execve(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        setpgid(child, child);
        tcsetpgrp(STDIN_FILENO, child);
        (void)!write(told[1], &child, sizeof child);
        close(told[1]);
        int status = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFSIGNALED(status)) {
            // Told on as a shell's $? would not: by the same signal.
            signal(WTERMSIG(status), SIG_DFL);
            kill(getpid(), WTERMSIG(status));
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 255);
    }
    close(told[1]);
    // A new terminal's modes, read while gpusched is still being started.
    m_initial_modes = modes();
    if (read(told[0], &m_gpusched, sizeof m_gpusched) != sizeof m_gpusched) {
        close(told[0]);
        throw std::runtime_error("the terminal's session leader did not start gpusched");
    }
    close(told[0]);
    fcntl(m_master, F_SETFL, fcntl(m_master, F_GETFL) | O_NONBLOCK);
}

PseudoTerminal::~PseudoTerminal()
{
    if (!m_reaped) {
        kill(m_gpusched, SIGKILL);
        kill(m_shell, SIGKILL);
        waitpid(m_shell, nullptr, 0);
    }
    close(m_master);
}

void PseudoTerminal::type(const std::string& keys)
{
    (void)!write(m_master, keys.data(), keys.size());
}

void PseudoTerminal::resize(unsigned rows, unsigned columns)
{
    read_some(0); // what was written for the old size is seen at the old size
    winsize size{};
    size.ws_row = static_cast<unsigned short>(rows);
    size.ws_col = static_cast<unsigned short>(columns);
    ioctl(m_master, TIOCSWINSZ, &size);
    m_screen.resize(rows, columns);
}

bool PseudoTerminal::read_some(int timeout_ms)
{
    pollfd readable{m_master, POLLIN, 0};
    if (poll(&readable, 1, timeout_ms) <= 0) {
        return false;
    }
    bool got = false;
    std::array<char, 4096> buffer{};
    while (true) {
        const auto count = read(m_master, buffer.data(), buffer.size());
        if (count <= 0) {
            break; // EAGAIN; EIO once nothing has the terminal open any more
        }
        const std::string_view bytes(buffer.data(), static_cast<std::size_t>(count));
        m_written.append(bytes);
        m_screen.feed(bytes);
        got = true;
    }
    if (got && on_output) {
        on_output(m_screen);
    }
    return got;
}

bool PseudoTerminal::read_until(const std::function<bool()>& condition,
                                std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        if (!read_some(10)) {
            if (!m_reaped && waitpid(m_shell, nullptr, WNOHANG) == m_shell) {
                m_reaped = true; // nothing more will come
                read_some(0);
                return condition();
            }
        }
    }
    return true;
}

void PseudoTerminal::drain(std::chrono::milliseconds quiet)
{
    while (read_some(static_cast<int>(quiet.count()))) {
    }
}

Finished PseudoTerminal::wait(std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    Finished finished;
    int status = 0;
    while (true) {
        read_some(10);
        const pid_t reaped = waitpid(m_shell, &status, WNOHANG);
        if (reaped == m_shell) {
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            finished.timed_out = true;
            kill(m_gpusched, SIGKILL);
            kill(m_shell, SIGKILL);
            waitpid(m_shell, &status, 0);
            break;
        }
    }
    m_reaped = true;
    while (read_some(50)) { // what was written last, still in the terminal
    }
    if (WIFEXITED(status)) {
        finished.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        finished.signal = WTERMSIG(status);
    }
    finished.err = m_written;
    return finished;
}

char process_state(pid_t pid)
{
    const auto stat = read_file(fmt::format("/proc/{}/stat", pid));
    const auto end_of_name = stat.rfind(')');
    if (end_of_name == std::string::npos || end_of_name + 2 >= stat.size()) {
        return '?';
    }
    return stat[end_of_name + 2];
}

bool job_stopped(pid_t pid)
{
    const char state = process_state(pid);
    if (state != 'D') {
        return state == 'T';
    }
    std::istringstream children(read_file(fmt::format("/proc/{0}/task/{0}/children", pid)));
    pid_t child = 0;
    while (children >> child) {
        if (process_state(child) == 'T') {
            return true;
        }
    }
    return false;
}

} // namespace gpusched::testing
