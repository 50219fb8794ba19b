#include <gpusched/sys/run_guard.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/sys/descriptor_copy.hpp>
#include <gpusched/sys/run_processes.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <set>
#include <utility>

namespace gpusched::sys {
namespace {

constexpr char k_goodbye = 'x';

// The guard finds the run's processes by scanning /proc: they are no children of it, and
// nothing else tells when they fork or exit. It looks this often while it stops them.
constexpr auto k_scan_interval = std::chrono::milliseconds(20);
// Past SIGKILL, how long it waits for processes that cannot die (stuck in the kernel).
constexpr auto k_give_up_after_kill = std::chrono::seconds(10);
// How long the scheduler waits for the guard to exit after saying goodbye: a stopped guard
// must not hold the scheduler's exit.
constexpr auto k_goodbye_wait = std::chrono::milliseconds(1000);

// A line on stderr that can never block the guard: it writes through an open file
// description of its own, non-blocking and appending, and a line that does not fit is
// dropped.
void tell(const std::string& line)
{
    UniqueFd own(open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC));
    if (own) {
        (void)write_all(own.get(), line);
    }
}

// Sends SIGTERM once to each process of the run (through its group where it has one of the
// run's: one signal per process, as a graceful stop expects), SIGKILL to all `kill_after`
// later, and looks again until none is left.
[[noreturn]] void stop_the_run(RunSigns signs, pid_t scheduler,
                               std::chrono::milliseconds kill_after)
{
    using Steady = std::chrono::steady_clock;
    const auto kill_at = Steady::now() + kill_after;
    std::set<pid_t> told;        // processes that had their SIGTERM
    std::set<pid_t> told_groups; // groups that had theirs
    for (auto run = find_run_processes(signs); !run.empty(); run = find_run_processes(signs)) {
        const auto now = Steady::now();
        if (now > kill_at + k_give_up_after_kill) {
            tell(fmt::format("gpusched: {} left by the jobs of gpusched {} do not die; "
                             "giving up\n",
                             counted(run.size(), "process", "processes"), scheduler));
            _exit(1);
        }
        for (const auto& process : run) {
            const bool whole_group = signs.groups.contains(process.group);
            if (now >= kill_at) {
                if (whole_group) {
                    kill(-process.group, SIGKILL);
                }
                kill(process.pid, SIGKILL);
            } else if (whole_group) {
                if (told_groups.insert(process.group).second) {
                    kill(-process.group, SIGTERM);
                }
                told.insert(process.pid); // the group's signal reached it, or it came later
            } else if (told.insert(process.pid).second) {
                kill(process.pid, SIGTERM);
            }
        }
        const auto interval = std::chrono::nanoseconds(k_scan_interval);
        const timespec pause{0, static_cast<long>(interval.count())};
        nanosleep(&pause, nullptr);
    }
    if (!told.empty()) {
        tell(fmt::format("gpusched: gpusched {} ended without stopping its jobs; their {} "
                         "processes were stopped (SIGTERM, SIGKILL after {} ms)\n",
                         scheduler, told.size(), kill_after.count()));
    }
    _exit(0);
}

// Closes every descriptor from 3 up but those in `keep`.
void close_all_but(std::vector<int> keep)
{
    std::sort(keep.begin(), keep.end());
    unsigned next = STDERR_FILENO + 1;
    for (const int fd : keep) {
        if (fd >= static_cast<int>(next)) {
            if (fd > static_cast<int>(next)) {
                close_range(next, static_cast<unsigned>(fd) - 1, 0);
            }
            next = static_cast<unsigned>(fd) + 1;
        }
    }
    close_range(next, ~0U, 0);
}

[[noreturn]] void guard_main(int channel, RunSigns signs, pid_t scheduler,
                             std::chrono::milliseconds kill_after)
{
    prctl(PR_SET_NAME, "gpusched-guard");
    // The guard keeps nothing the scheduler may need to see closed: not its input, not
    // the leases of GPUs the scheduler lets go of.
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    close(null);
    const pid_t self = getpid();
    (void)write_all(channel, std::string_view(reinterpret_cast<const char*>(&self), sizeof self));
    pollfd wait{channel, POLLIN, 0};
    while (poll(&wait, 1, -1) < 0 && errno == EINTR) {
    }
    char said = 0;
    if (read(channel, &said, 1) == 1 && said == k_goodbye) {
        _exit(0);
    }
    stop_the_run(std::move(signs), scheduler, kill_after);
}

} // namespace

std::string RunGuard::make_run_token()
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return fmt::format("{}.{}.{}", getpid(), now.tv_sec, now.tv_nsec);
}

RunGuard::RunGuard(std::chrono::milliseconds kill_after, const std::vector<int>& keep,
                   int lowest_marker_fd, const std::string& run_token)
{
    std::array<int, 2> channel{};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel.data()) != 0) {
        throw_errno("socketpair");
    }
    m_channel.reset(channel[0]);
    UniqueFd guard_end(channel[1]);
    std::array<int, 2> marker{};
    if (pipe2(marker.data(), O_CLOEXEC) != 0) {
        throw_errno("pipe2");
    }
    close(marker[1]);
    const UniqueFd marker_read(marker[0]);
    m_marker = duplicate_above(marker_read.get(), lowest_marker_fd);
    struct stat info {};
    if (fstat(m_marker.get(), &info) != 0) {
        throw_errno("fstat");
    }
    RunSigns signs{
        fmt::format("pipe:[{}]", info.st_ino), "GPUSCHED_RUN=" + run_token, {}, {getpgrp()}};

    const pid_t scheduler = getpid();
    const pid_t middle = fork();
    if (middle < 0) {
        throw_errno("fork");
    }
    if (middle == 0) {
        // Forked twice, in a session of its own, so that the guard is reparented away from
        // the scheduler at once and a signal to the scheduler's process group misses it.
        setsid();
        signs.foreign_groups.insert(getpgrp());
        if (fork() != 0) {
            _exit(0);
        }
        auto kept = keep;
        kept.push_back(guard_end.get());
        close_all_but(kept);
        guard_main(guard_end.get(), std::move(signs), scheduler, kill_after);
    }
    int status = 0;
    while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    guard_end.reset();
    // The guard says its pid first thing, so that its exit can be waited for.
    pid_t guard = 0;
    if (recv(m_channel.get(), &guard, sizeof guard, MSG_WAITALL) == sizeof guard) {
        m_guard_exit.reset(static_cast<int>(syscall(SYS_pidfd_open, guard, 0)));
    }
}

RunGuard::~RunGuard()
{
    // A guard that was killed must not cost us a SIGPIPE.
    if (!m_channel || send(m_channel.get(), &k_goodbye, 1, MSG_NOSIGNAL) != 1) {
        return;
    }
    // Wait until the guard has exited, so that nothing of ours is left running once the
    // scheduler has: its pidfd tells (where the kernel has pidfds), else its end of the
    // channel closing, a moment before.
    pollfd exited{m_guard_exit ? m_guard_exit.get() : m_channel.get(), POLLIN, 0};
    while (poll(&exited, 1, static_cast<int>(k_goodbye_wait.count())) < 0 && errno == EINTR) {
    }
}

} // namespace gpusched::sys
