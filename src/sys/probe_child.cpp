#include <gpusched/sys/probe_child.hpp>

#include <gpusched/gpu/cuda_probe.hpp>
#include <gpusched/gpu/nvml_usage.hpp>
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

extern char** environ;

namespace gpusched::sys {
namespace {

constexpr const char* k_self = "/proc/self/exe";
constexpr std::size_t k_longest_answer = 1024 * 1024;

} // namespace

ProbeAnswer run_probe_child(const std::vector<std::string>& args, std::chrono::milliseconds timeout)
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
    std::vector<char*> argv = {const_cast<char*>("gpusched")};
    for (const auto& arg : args) {
        argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    const JobEnvironment environment(environ);
    std::vector<char*> envp;
    for (const auto& variable : environment.base()) {
        envp.push_back(const_cast<char*>(variable.c_str()));
    }
    envp.push_back(nullptr);
    pid_t pid = -1;
    if (const int error =
            posix_spawn(&pid, k_self, actions.get(), attributes.get(), argv.data(), envp.data())) {
        return {{},
                fmt::format("cannot start {} {}: {}", k_self, args.front(), std::strerror(error))};
    }
    write_end.reset();

    ProbeAnswer answer;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    while (answer.output.size() < k_longest_answer) {
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
        std::array<char, 4096> chunk{};
        const auto got = ::read(read_end.get(), chunk.data(), chunk.size());
        if (got <= 0) {
            break;
        }
        answer.output.append(chunk.data(), static_cast<std::size_t>(got));
    }

    if (timed_out) {
        // A process stuck in the driver may not die at once; it is reaped later with the
        // jobs rather than waited for here.
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, WNOHANG);
        return {{}, fmt::format("{} did not answer within {} ms", args.front(), timeout.count())};
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        return {{}, fmt::format("{} was killed by signal {}", args.front(), WTERMSIG(status))};
    }
    return answer;
}

GpuInventory CudaProbeChild::inventory()
{
    if (!m_answer) {
        const auto answer = run_probe_child({"__probe-cuda"}, m_timeout);
        m_answer = answer.problem.empty() ? parse_inventory(answer.output)
                                          : GpuInventory{{}, answer.problem};
    }
    return *m_answer;
}

UsageReport UsageProbeChild::usage(const std::vector<std::string>& ids)
{
    std::vector<std::string> args = {"__probe-usage"};
    args.insert(args.end(), ids.begin(), ids.end());
    const auto answer = run_probe_child(args, m_timeout);
    return answer.problem.empty() ? parse_usage(answer.output) : UsageReport{{}, answer.problem};
}

int print_cuda_inventory()
{
    fmt::print("{}", format_inventory(gpu::inventory_in_this_process()));
    std::fflush(stdout);
    return 0;
}

int print_gpu_usage(const std::vector<std::string>& ids)
{
    fmt::print("{}", format_usage(gpu::nvml_usage(ids)));
    std::fflush(stdout);
    return 0;
}

} // namespace gpusched::sys
