#include <gpusched/sys/run_guard.hpp>

#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>

#include <dirent.h>
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
#include <cstdlib>
#include <ctime>
#include <set>
#include <string>

namespace gpusched::sys {
namespace {

constexpr char k_goodbye = 'x';

// The guard finds the jobs' processes by scanning /proc: they are no children of it, and
// nothing else tells when they fork or exit. It looks this often while it stops them.
constexpr auto k_scan_interval = std::chrono::milliseconds(20);
// Past SIGKILL, how long it waits for processes that cannot die (stuck in the kernel).
constexpr auto k_give_up_after_kill = std::chrono::seconds(10);

// Every process of ours, other than the guard, that holds the pipe named `marker`.
std::vector<pid_t> holders_of(const std::string& marker)
{
    std::vector<pid_t> holders;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) {
        return holders;
    }
    const pid_t self = getpid();
    std::array<char, 64> target{};
    while (const dirent* entry = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == self) {
            continue;
        }
        const auto fd_dir = fmt::format("/proc/{}/fd", pid);
        DIR* fds = opendir(fd_dir.c_str()); // fails for other users' processes: not ours
        if (fds == nullptr) {
            continue;
        }
        while (const dirent* fd = readdir(fds)) {
            const auto length = readlinkat(dirfd(fds), fd->d_name, target.data(), target.size());
            if (length > 0 && std::string_view(target.data(), static_cast<std::size_t>(length)) ==
                                  marker) {
                holders.push_back(static_cast<pid_t>(pid));
                break;
            }
        }
        closedir(fds);
    }
    closedir(proc);
    return holders;
}

void signal_holder(pid_t pid, int signal)
{
    // Its process group too: what a job started without passing the marker on (Python's
    // subprocess closes inherited descriptors) is still in the job's group.
    const pid_t group = getpgid(pid);
    if (group > 1 && group != getpgrp()) {
        kill(-group, signal);
    }
    kill(pid, signal);
}

// A line on stderr that can never block the guard: a pipe nobody reads gets its own
// non-blocking open file description, and a line that does not fit is dropped.
void tell(const std::string& line)
{
    UniqueFd own(open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat info {};
    const bool may_block = fstat(STDERR_FILENO, &info) == 0 && !S_ISREG(info.st_mode);
    if (own) {
        (void)write_all(own.get(), line);
    } else if (!may_block) {
        (void)write_all(STDERR_FILENO, line);
    }
}

[[noreturn]] void stop_what_is_left(const std::string& marker, pid_t scheduler,
                                    std::chrono::milliseconds kill_after)
{
    using Clock = std::chrono::steady_clock;
    const auto kill_at = Clock::now() + kill_after;
    std::set<pid_t> told;
    std::size_t stopped = 0;
    for (auto holders = holders_of(marker); !holders.empty(); holders = holders_of(marker)) {
        const auto now = Clock::now();
        if (now > kill_at + k_give_up_after_kill) {
            tell(fmt::format("gpusched: {} processes left by the jobs of gpusched {} do not die; "
                             "giving up\n",
                             holders.size(), scheduler));
            _exit(1);
        }
        for (const pid_t pid : holders) {
            if (now >= kill_at) {
                signal_holder(pid, SIGKILL);
            } else if (told.insert(pid).second) {
                signal_holder(pid, SIGTERM);
            }
        }
        stopped = std::max(stopped, told.size());
        const auto interval = std::chrono::nanoseconds(k_scan_interval);
        const timespec pause{0, static_cast<long>(interval.count())};
        nanosleep(&pause, nullptr);
    }
    if (stopped > 0) {
        tell(fmt::format("gpusched: gpusched {} ended without stopping its jobs; their {} "
                         "processes were stopped (SIGTERM, SIGKILL after {} ms)\n",
                         scheduler, stopped, kill_after.count()));
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

[[noreturn]] void guard_main(int channel, const std::string& marker, pid_t scheduler,
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
    stop_what_is_left(marker, scheduler, kill_after);
}

} // namespace

RunGuard::RunGuard(std::chrono::milliseconds kill_after, const std::vector<int>& keep,
                   int lowest_marker_fd)
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
    m_marker.reset(fcntl(marker[0], F_DUPFD_CLOEXEC, lowest_marker_fd));
    close(marker[0]);
    if (!m_marker) {
        throw_errno("fcntl F_DUPFD_CLOEXEC");
    }
    struct stat info {};
    if (fstat(m_marker.get(), &info) != 0) {
        throw_errno("fstat");
    }
    const auto marker_name = fmt::format("pipe:[{}]", info.st_ino);

    const pid_t scheduler = getpid();
    const pid_t middle = fork();
    if (middle < 0) {
        throw_errno("fork");
    }
    if (middle == 0) {
        // Forked twice, so that the guard is reparented away from the scheduler at once.
        setsid();
        if (fork() != 0) {
            _exit(0);
        }
        auto kept = keep;
        kept.push_back(guard_end.get());
        close_all_but(kept);
        guard_main(guard_end.get(), marker_name, scheduler, kill_after);
    }
    int status = 0;
    while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    guard_end.reset();
    // The guard says its pid first thing, so that its exit can be waited for below.
    pid_t guard = 0;
    if (recv(m_channel.get(), &guard, sizeof guard, MSG_WAITALL) == sizeof guard) {
        m_guard_exit.reset(static_cast<int>(syscall(SYS_pidfd_open, guard, 0)));
    }
}

RunGuard::~RunGuard()
{
    if (!m_channel) {
        return;
    }
    (void)write_all(m_channel.get(), std::string_view(&k_goodbye, 1));
    // Wait until the guard has exited, so that nothing of ours is left running once the
    // scheduler has: its pidfd tells (where the kernel has pidfds), else its end of the
    // channel closing, a moment before.
    if (m_guard_exit) {
        pollfd exited{m_guard_exit.get(), POLLIN, 0};
        while (poll(&exited, 1, -1) < 0 && errno == EINTR) {
        }
        return;
    }
    char ignored = 0;
    while (read(m_channel.get(), &ignored, 1) < 0 && errno == EINTR) {
    }
}

} // namespace gpusched::sys
