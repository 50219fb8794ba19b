#include <gpusched/sys/job_spawner.hpp>

#include <gpusched/sys/default_signals.hpp>
#include <gpusched/sys/job_niceness.hpp>
#include <gpusched/sys/unique_fd.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace gpusched::sys {
namespace {

// Linux refuses a single argument longer than MAX_ARG_STRLEN (32 pages, 128 KiB with 4 KiB
// pages) with E2BIG. Commands past a safe margin below it go to the shell as a script.
constexpr std::size_t k_longest_inline_command = 64 * 1024;

// The first descriptor a job inherits beyond stdin, stdout and stderr: its leases, then a
// long command's script.
constexpr int k_first_inherited_fd = 3;

// Descriptors the scheduler creates for itself start above the range a job may use.
constexpr int k_private_fd_floor = 10;

} // namespace

int JobSpawner::lowest_private_fd(std::size_t leases)
{
    // Leases, the marker, the presence token and a script: the most a job gets.
    return std::max(k_private_fd_floor, k_first_inherited_fd + static_cast<int>(leases) + 3);
}

JobSpawner::JobSpawner(std::string shell, int marker) : m_shell(std::move(shell)), m_marker(marker)
{
    if (m_marker >= 0 && m_marker <= k_first_inherited_fd) {
        throw std::logic_error("the marker descriptor lies among the descriptors a job gets");
    }
    // A job starts as a program started by a login shell would: nothing blocked, every signal
    // at its default action. Whatever gpusched inherited (SIGINT and SIGQUIT ignored when a
    // script started it with `&`, SIGPIPE it ignores for itself, a mask) would otherwise
    // reach the job, and a job that ignores SIGINT never sees the stop meant for it.
    m_attributes.new_process_group().signal_mask(no_signals()).default_signals(all_signals());
    m_plain_actions.open(STDIN_FILENO, "/dev/null", O_RDONLY);
    if (m_marker >= 0) {
        m_plain_actions.dup2(m_marker, k_first_inherited_fd);
    }
    m_plain_actions.close_from(k_first_inherited_fd + (m_marker >= 0 ? 1 : 0));
}

// Commands longer than k_longest_inline_command are written to an anonymous memory file that
// the shell runs as a script from /dev/fd/N, after the other inherited descriptors; the
// script's first line closes it so the job sees no extra descriptor.
Result<pid_t> JobSpawner::spawn(const std::string& command, char* const* envp, JobStreams streams,
                                std::span<const int> leases, int presence, JobPlace place) const
{
    // Each source is dup2'd in this order, so none may lie where an earlier one lands.
    const int marker_fd = k_first_inherited_fd + static_cast<int>(leases.size());
    const int presence_fd = marker_fd + (m_marker >= 0 ? 1 : 0);
    const int script_fd = presence_fd + (presence >= 0 ? 1 : 0);
    if (m_marker >= 0 && m_marker < marker_fd) {
        throw std::logic_error("the marker descriptor lies among the descriptors a job gets");
    }
    for (const int lease : leases) {
        if (lease < marker_fd) {
            throw std::logic_error("a lease descriptor lies among the descriptors a job gets");
        }
    }
    if (presence >= 0 && presence <= presence_fd) {
        throw std::logic_error("the presence descriptor lies among the descriptors a job gets");
    }
    const bool as_script = command.size() > k_longest_inline_command;
    UniqueFd script;
    if (as_script) {
        UniqueFd memory(memfd_create("gpusched-command", MFD_CLOEXEC));
        if (memory) {
            script.reset(fcntl(memory.get(), F_DUPFD_CLOEXEC, lowest_private_fd(leases.size())));
        }
        if (!script || !write_all(script.get(), fmt::format("exec {}<&-\n", script_fd)) ||
            !write_all(script.get(), command) || !write_all(script.get(), "\n")) {
            const int error = errno;
            return Failure{fmt::format("the script of a long command: {}", std::strerror(error)),
                           error};
        }
    }

    const posix_spawn_file_actions_t* actions = m_plain_actions.get();
    std::optional<SpawnFileActions> custom;
    if (as_script || streams.out >= 0 || streams.err >= 0 || !leases.empty() || presence >= 0 ||
        place.directory != nullptr) {
        custom.emplace();
        if (place.directory != nullptr) {
            custom->chdir(place.directory);
        }
        custom->open(STDIN_FILENO, "/dev/null", O_RDONLY);
        if (streams.out >= 0) {
            custom->dup2(streams.out, STDOUT_FILENO);
        }
        if (streams.err >= 0) {
            custom->dup2(streams.err, STDERR_FILENO);
        }
        for (std::size_t i = 0; i < leases.size(); ++i) {
            custom->dup2(leases[i], k_first_inherited_fd + static_cast<int>(i));
        }
        if (m_marker >= 0) {
            custom->dup2(m_marker, marker_fd);
        }
        if (presence >= 0) {
            custom->dup2(presence, presence_fd);
        }
        if (as_script) {
            custom->dup2(script.get(), script_fd);
        }
        custom->close_from(as_script ? script_fd + 1 : script_fd);
        actions = custom->get();
    }

    // posix_spawn takes char* const argv[] for C compatibility; it does not write to them.
    const std::string script_path = "/dev/fd/" + std::to_string(script_fd);
    // A niceness is set by nice(1) in front of the shell, as GNU parallel's --nice does: the
    // shell and all it starts have it from their first instruction, which a setpriority()
    // after the spawn could not promise (and posix_spawn has no attribute for it). nice execs
    // the shell, so the job's pid and process group are the same.
    // Looked up only for a job that asks for it: a plain run's first spawn searches no PATH.
    static const std::optional<std::string> no_nice;
    const auto& nice = place.nice != 0 ? nice_program() : no_nice;
    const std::string nice_increment = std::to_string(place.nice);
    if (place.nice != 0 && !nice) {
        return Failure{"nice(1) is not on gpusched's PATH", ENOENT};
    }
    char* const nice_argv[] = {const_cast<char*>(nice ? nice->c_str() : "nice"),
                               const_cast<char*>("-n"), const_cast<char*>(nice_increment.c_str())};
    char* const inline_argv[] = {nice_argv[0],
                                 nice_argv[1],
                                 nice_argv[2],
                                 const_cast<char*>(m_shell.c_str()),
                                 const_cast<char*>("-c"),
                                 const_cast<char*>(command.c_str()),
                                 nullptr};
    char* const script_argv[] = {nice_argv[0],
                                 nice_argv[1],
                                 nice_argv[2],
                                 const_cast<char*>(m_shell.c_str()),
                                 const_cast<char*>(script_path.c_str()),
                                 nullptr};
    const std::size_t skipped = place.nice != 0 ? 0 : std::size(nice_argv);
    // posix_spawn has no attribute for the umask: the child copies ours when it is made, so
    // ours is the job's for that moment (the scheduler is single-threaded).
    const mode_t own_umask = place.umask >= 0 ? ::umask(static_cast<mode_t>(place.umask)) : 0;
    pid_t pid = -1;
    char* const* argv = (as_script ? script_argv : inline_argv) + skipped;
    const int error = posix_spawn(&pid, place.nice != 0 ? nice->c_str() : m_shell.c_str(), actions,
                                  m_attributes.get(), argv, envp);
    if (place.umask >= 0) {
        ::umask(own_umask);
    }
    if (error != 0) {
        return Failure{
            fmt::format("{}: {}", place.nice != 0 ? "nice" : m_shell.c_str(), std::strerror(error)),
            error};
    }
    return pid;
}

} // namespace gpusched::sys
