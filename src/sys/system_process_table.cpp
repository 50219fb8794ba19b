#include <gpusched/sys/system_process_table.hpp>

#include <gpusched/sys/descriptor_copy.hpp>
#include <gpusched/sys/poll_timeout.hpp>
#include <gpusched/sys/process_tree.hpp>
#include <gpusched/sys/proc_files.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>

namespace gpusched::sys {

SystemProcessTable::SystemProcessTable(const JobSpawner& spawner) : m_spawner(spawner)
{
    become_child_subreaper();
}

Result<Spawned> SystemProcessTable::spawn(const SpawnRequest& request)
{
    std::array<int, 2> ends{};
    if (pipe2(ends.data(), O_CLOEXEC) != 0) {
        return system_failure("pipe2");
    }
    UniqueFd read_end(ends[0]);
    // The write end must lie above every place a job's descriptors go (see JobSpawner).
    UniqueFd write_end(
        fcntl(ends[1], F_DUPFD_CLOEXEC, JobSpawner::lowest_private_fd(request.inherited.size())));
    const int dup_error = errno;
    close(ends[1]);
    if (!write_end) {
        errno = dup_error;
        return descriptor_copy_failure(JobSpawner::lowest_private_fd(request.inherited.size()));
    }
    auto pid = m_spawner.spawn(
        request.command, request.environment, {request.out, request.err}, request.inherited,
        write_end.get(),
        {request.directory ? request.directory->c_str() : nullptr, request.umask, request.nice});
    if (!pid) {
        return pid.failure();
    }
    const int token = read_end.get();
    m_tokens.emplace(token, Token{std::move(read_end)});
    return Spawned{*pid, token};
}

std::vector<int> SystemProcessTable::wait(std::vector<pollfd>& others,
                                          std::optional<std::chrono::milliseconds> timeout)
{
    // The tokens go last, and are taken off again before returning.
    const auto others_end = others.size();
    for (const auto& [fd, token] : m_tokens) {
        if (!token.released) {
            others.push_back({fd, POLLIN, 0});
        }
    }
    const int ready = poll(others.data(), others.size(), poll_timeout(timeout));
    const int poll_error = errno;
    std::vector<int> released_tokens;
    for (auto fd = others.begin() + static_cast<std::ptrdiff_t>(others_end);
         ready > 0 && fd != others.end(); ++fd) {
        if (fd->revents != 0 && released(fd->fd)) {
            released_tokens.push_back(fd->fd);
        }
    }
    others.resize(others_end);
    if (ready < 0) {
        if (poll_error != EINTR) {
            errno = poll_error;
            throw_errno("poll");
        }
        for (auto& fd : others) {
            fd.revents = 0;
        }
    }
    return released_tokens;
}

bool SystemProcessTable::released(int token)
{
    const auto found = m_tokens.find(token);
    if (found != m_tokens.end() && found->second.released) {
        return true;
    }
    pollfd ready{token, POLLIN, 0};
    while (true) {
        if (poll(&ready, 1, 0) <= 0) {
            return false;
        }
        if ((ready.revents & POLLIN) == 0) {
            if ((ready.revents & (POLLHUP | POLLERR)) == 0) {
                return false;
            }
            break;
        }
        // A job wrote into its token: what it wrote means nothing, and is dropped so that the
        // pipe never fills. Hang-up comes with the last byte read.
        std::array<char, 4096> ignored{};
        if (read(token, ignored.data(), ignored.size()) <= 0) {
            break;
        }
    }
    if (found != m_tokens.end()) {
        found->second.released = true;
    }
    return true;
}

void SystemProcessTable::forget_token(int token)
{
    m_tokens.erase(token);
}

void SystemProcessTable::signal_group(ProcessId leader, int signal)
{
    kill(-leader, signal);
}

void SystemProcessTable::signal_process(ProcessId pid, int signal)
{
    kill(pid, signal);
}

bool SystemProcessTable::group_exists(ProcessId leader)
{
    return kill(-leader, 0) == 0 || errno == EPERM;
}

std::optional<Reaped> SystemProcessTable::reap()
{
    while (true) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED);
        if (pid > 0) {
            if (WIFSTOPPED(status)) {
                return Reaped{pid, 0, WSTOPSIG(status), true};
            }
            if (WIFSIGNALED(status)) {
                return Reaped{pid, 0, WTERMSIG(status)};
            }
            return Reaped{pid, WEXITSTATUS(status), 0};
        }
        if (pid == 0 || errno == ECHILD) {
            return std::nullopt;
        }
        if (errno != EINTR) {
            throw_errno("waitpid");
        }
    }
}

void SystemProcessTable::reap_all()
{
    while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
    }
}

std::vector<ProcessId> SystemProcessTable::children()
{
    auto children = direct_children();
    // A zombie has ended; it is reaped with the next SIGCHLD.
    std::erase_if(children, [](pid_t child) {
        const auto stat = read_process_stat(child);
        return !stat || stat->dead();
    });
    return children;
}

std::vector<std::vector<ProcessInfo>>
SystemProcessTable::find_processes(std::span<const JobTrace> jobs)
{
    std::vector<std::vector<ProcessInfo>> found(jobs.size());
    // What each token's write end reads as in /proc/PID/fd; named only here, where it is
    // looked for, not on every start.
    std::vector<std::string> links(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        struct stat pipe {};
        if (m_tokens.contains(jobs[i].token) && fstat(jobs[i].token, &pipe) == 0) {
            links[i] = "pipe:[" + std::to_string(pipe.st_ino) + "]";
        }
    }
    for (const pid_t pid : every_process()) {
        const auto stat = read_process_stat(pid);
        if (!stat || stat->dead()) {
            continue;
        }
        std::size_t job = jobs.size();
        for (std::size_t i = 0; i < jobs.size() && job == jobs.size(); ++i) {
            if (jobs[i].group > 0 && stat->group == jobs[i].group) {
                job = i;
            }
        }
        if (job == jobs.size()) {
            has_descriptor(pid, [&](std::string_view target) {
                for (std::size_t i = 0; i < jobs.size(); ++i) {
                    if (!links[i].empty() && target == links[i]) {
                        job = i;
                        return true;
                    }
                }
                return false;
            });
        }
        if (job < jobs.size()) {
            found[job].push_back({pid, stat->group, process_name(pid)});
        }
    }
    return found;
}

} // namespace gpusched::sys
