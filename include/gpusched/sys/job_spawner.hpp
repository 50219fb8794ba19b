#pragma once

#include <gpusched/result.hpp>
#include <gpusched/sys/spawn_actions.hpp>

#include <sys/types.h>

#include <csignal>
#include <span>
#include <string>

namespace gpusched::sys {

// Where a job's stdout and stderr go: descriptors to put on fd 1 and 2 (files of
// --output-dir, pipes for --tag), or -1 to share the scheduler's.
struct JobStreams {
    int out = -1;
    int err = -1;
};

// Where a job starts and its umask, when not the scheduler's (a queued job's submitter's).
struct JobPlace {
    const char* directory = nullptr;
    int umask = -1;
    // Added to the job's niceness, as `nice -n`, when not 0 (see JobRequest::nice).
    int nice = 0;
};

// Starts jobs as `SHELL -c COMMAND` with posix_spawn: each in a process group of its own,
// stdin from /dev/null (a job must never read the queue), stdout and stderr shared with the
// scheduler, its GPUs' lease descriptors at 3, 4, ..., then the run guard's marker, then its
// presence token (the write end of a pipe: see ProcessTable), no other descriptor, no signal
// blocked and every signal at its default action.
class JobSpawner {
public:
    // `marker`: a descriptor every job inherits (RunGuard::marker_fd), or -1.
    explicit JobSpawner(std::string shell, int marker = -1);

    // Each source descriptor must lie above the places the ones before it go to: the leases
    // and the marker at 3 + their number or above, `presence` above the marker's place (as
    // lowest_private_fd makes sure), so that no dup2 overwrites a source not yet copied.
    // Returns the job's pid, or what kept it from starting, with its errno.
    Result<pid_t> spawn(const std::string& command, char* const* envp, JobStreams streams = {},
                        std::span<const int> leases = {}, int presence = -1,
                        JobPlace place = {}) const;
    // The lowest descriptor a job's private sources may lie at, for jobs with `leases` GPUs.
    static int lowest_private_fd(std::size_t leases);
    const std::string& shell() const { return m_shell; }

private:
    std::string m_shell;
    int m_marker = -1;
    SpawnAttributes m_attributes;
    // The file actions of the common case (no redirection, a short command), built once.
    SpawnFileActions m_plain_actions;
};

} // namespace gpusched::sys
