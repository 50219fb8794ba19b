#pragma once

#include <spawn.h>
#include <sys/types.h>

namespace gpusched::sys {

// RAII owners of posix_spawn's two attribute objects; each throws if initialisation fails
// and builder calls throw with the name of the call that failed.
class SpawnFileActions {
public:
    SpawnFileActions();
    ~SpawnFileActions();
    SpawnFileActions(const SpawnFileActions&) = delete;
    SpawnFileActions& operator=(const SpawnFileActions&) = delete;

    // `mode` is for a file O_CREAT makes.
    SpawnFileActions& open(int fd, const char* path, int flags, mode_t mode = 0);
    SpawnFileActions& dup2(int fd, int new_fd);
    // Closes every fd from `lowest` up in the child, whatever the scheduler inherited.
    SpawnFileActions& close_from(int lowest);
    // The child starts in `path` (which must outlive the spawn).
    SpawnFileActions& chdir(const char* path);

    const posix_spawn_file_actions_t* get() const { return &m_actions; }

private:
    posix_spawn_file_actions_t m_actions{};
};

class SpawnAttributes {
public:
    SpawnAttributes();
    ~SpawnAttributes();
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;

    // The child leads a process group of its own, so one kill() reaches all it starts.
    SpawnAttributes& new_process_group();
    // The child leads a session of its own: no terminal's signals (Ctrl-C, a hang-up) reach it.
    SpawnAttributes& new_session();
    SpawnAttributes& signal_mask(const sigset_t& mask);
    // The child starts with the default action for each of `signals`.
    SpawnAttributes& default_signals(const sigset_t& signals);

    const posix_spawnattr_t* get() const { return &m_attributes; }

private:
    void set_flag(short flag);

    posix_spawnattr_t m_attributes{};
};

} // namespace gpusched::sys
