#include <gpusched/sys/probe_child.hpp>

#include <gpusched/gpu/cuda_probe.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/sys/spawn_actions.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

extern char** environ;

namespace gpusched::sys {
namespace {

constexpr const char* k_self = "/proc/self/exe";
constexpr std::size_t k_longest_answer = 64 * 1024;

} // namespace

GpuInventory ProbeChild::inventory()
{
    if (!m_answer) {
        m_answer = ask_child();
    }
    return *m_answer;
}

GpuInventory ProbeChild::ask_child() const
{
    std::array<int, 2> ends{};
    if (pipe2(ends.data(), O_CLOEXEC) != 0) {
        throw_errno("pipe2");
    }
    UniqueFd read_end(ends[0]);
    UniqueFd write_end(ends[1]);

    SpawnFileActions actions;
    actions.open(STDIN_FILENO, "/dev/null", O_RDONLY)
        .dup2(write_end.get(), STDOUT_FILENO)
        .close_from(STDERR_FILENO + 1);
    SpawnAttributes attributes;
    char* const argv[] = {const_cast<char*>("gpusched"), const_cast<char*>("__probe-cuda"),
                          nullptr};
    pid_t pid = -1;
    if (const int error =
            posix_spawn(&pid, k_self, actions.get(), attributes.get(), argv, environ)) {
        return {{}, fmt::format("cannot start the GPU probe {}: {}", k_self, std::strerror(error))};
    }
    write_end.reset();

    std::string answer;
    const auto deadline = std::chrono::steady_clock::now() + m_timeout;
    bool timed_out = false;
    while (answer.size() < k_longest_answer) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd wait_for{read_end.get(), POLLIN, 0};
        const int ready = poll(&wait_for, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            timed_out = ready == 0;
            break;
        }
        std::array<char, 512> chunk{};
        const auto got = ::read(read_end.get(), chunk.data(), chunk.size());
        if (got <= 0) {
            break;
        }
        answer.append(chunk.data(), static_cast<std::size_t>(got));
    }

    if (timed_out) {
        // A process stuck in the driver may not die at once; it is reaped later with the
        // jobs rather than waited for here.
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, WNOHANG);
        return {{}, fmt::format("the CUDA probe did not answer within {} ms", m_timeout.count())};
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        return {{}, fmt::format("the CUDA probe was killed by signal {}", WTERMSIG(status))};
    }
    return parse_inventory(answer);
}

int run_probe_and_print()
{
    fmt::print("{}", format_inventory(gpu::inventory_in_this_process()));
    std::fflush(stdout);
    return 0;
}

} // namespace gpusched::sys
