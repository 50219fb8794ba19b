#include "terminal_shell.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gpusched::testing {

TerminalShell::TerminalShell(const std::vector<std::string>& args, const fs::path& cwd,
                             const std::map<std::string, std::optional<std::string>>& env)
{
    // Everything the child needs is made before fork: between fork and exec it only makes
    // system calls.
    auto env_strings = environment_with(env);
    std::vector<char*> envp;
    for (auto& variable : env_strings) {
        envp.push_back(variable.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> arg_strings = args;
    std::vector<char*> argv;
    for (auto& arg : arg_strings) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const std::string directory = cwd.string();

    m_shell = forkpty(&m_master, nullptr, nullptr, nullptr);
    if (m_shell < 0) {
        throw std::runtime_error(fmt::format("forkpty: {}", std::strerror(errno)));
    }
    if (m_shell == 0) {
        // As a terminal starts a shell: no signal blocked or ignored.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int number = 1; number < NSIG; ++number) {
            signal(number, SIG_DFL);
        }
        if (chdir(directory.c_str()) != 0) {
            _exit(126);
        }
        execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    fcntl(m_master, F_SETFL, fcntl(m_master, F_GETFL) | O_NONBLOCK);
}

TerminalShell::~TerminalShell()
{
    kill();
    close(m_master);
}

void TerminalShell::type(std::string_view keys)
{
    (void)!write(m_master, keys.data(), keys.size());
}

bool TerminalShell::read(std::chrono::milliseconds wait)
{
    pollfd readable{m_master, POLLIN, 0};
    if (poll(&readable, 1, static_cast<int>(wait.count())) <= 0) {
        return false;
    }
    bool got = false;
    std::array<char, 4096> buffer{};
    while (true) {
        const auto count = ::read(m_master, buffer.data(), buffer.size());
        if (count <= 0) {
            break; // EAGAIN; EIO once nothing has the terminal open
        }
        for (const char c : std::string_view(buffer.data(), static_cast<std::size_t>(count))) {
            if (c != '\r') {
                m_output += c;
            }
        }
        got = true;
    }
    return got;
}

std::optional<Finished> TerminalShell::try_wait()
{
    if (!m_finished) {
        int status = 0;
        if (waitpid(m_shell, &status, WNOHANG) != m_shell) {
            return std::nullopt;
        }
        Finished finished;
        if (WIFEXITED(status)) {
            finished.exit_status = WEXITSTATUS(status);
        } else {
            finished.signal = WTERMSIG(status);
        }
        m_finished = finished;
    }
    return m_finished;
}

void TerminalShell::kill()
{
    ::kill(-m_shell, SIGKILL); // the session leader leads its own group
    if (!m_finished) {
        int status = 0;
        waitpid(m_shell, &status, 0);
        m_finished = Finished{};
        m_finished->signal = SIGKILL;
    }
}

} // namespace gpusched::testing
