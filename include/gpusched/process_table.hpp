#pragma once

#include <gpusched/result.hpp>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct pollfd; // <poll.h>: only the table's users in sys/ wait on descriptors

namespace gpusched {

// A process id. pid_t is int wherever gpusched runs, and the core includes no system header.
using ProcessId = int;

// What a job is started with, besides its shell.
struct SpawnRequest {
    const std::string& command;
    char* const* environment;
    int out = -1; // a descriptor for its stdout, or -1 to share ours
    int err = -1;
    std::span<const int> inherited; // its GPUs' lease descriptors, at 3, 4, ...
    const std::string* directory = nullptr; // where it starts, if not in ours
    int umask = -1;                         // its umask, if not ours
    int nice = 0;                           // added to its niceness (JobRequest::nice)
};

struct Spawned {
    ProcessId pid = -1; // the job's shell, leader of a process group of its own
    // Its presence token: every process of the job inherits a descriptor of it, and
    // ProcessTable::released tells when none holds one any more. The table owns it until
    // forget_token.
    int token = -1;
};

// A process found holding a job's token, or in its process group.
struct ProcessInfo {
    ProcessId pid = 0;
    ProcessId group = 0;
    std::string name; // its command name, for the log
};

// The live processes of one job, as found by find_processes.
struct JobTrace {
    int token = -1;
    ProcessId group = 0; // its shell's pid, leader of its group
};

// What ended, or stopped, from reap().
struct Reaped {
    ProcessId pid = 0;
    int exit_code = 0;
    int signal = 0;       // the signal that killed it, or 0; or, when stopped, the one that did
    bool stopped = false; // it has not ended: a signal stopped it (SIGTTIN: it read the terminal)
};

// The system calls the runner makes for its jobs, and the events of its jobs it waits for,
// behind an interface so that its stop, kill-deadline, leftover and timeout rules are tested
// against a fake in the fake's own time (as ninja tests its builder against a
// FakeCommandRunner, and hides its ppoll behind SubprocessSet). The real one is
// sys/system_process_table.cpp.
class ProcessTable {
public:
    virtual ~ProcessTable() = default;

    // The started job, or what kept it from starting, with its errno.
    virtual Result<Spawned> spawn(const SpawnRequest& request) = 0;
    // Waits until a job's token is released, one of `others` is ready (their revents say
    // which), or `timeout` has passed (none: no limit); returns the tokens released, each
    // once. A job that writes into its token is drained here, so it never blocks on a full
    // pipe. A signal that interrupts the wait ends it with nothing. What ended meanwhile is
    // collected with reap().
    virtual std::vector<int> wait(std::vector<pollfd>& others,
                                  std::optional<std::chrono::milliseconds> timeout) = 0;
    // True once no process holds `token` any more. What a job wrote into it is dropped.
    virtual bool released(int token) = 0;
    virtual void forget_token(int token) = 0;

    // Signals the process group `leader` leads. Called only while the leader is unreaped,
    // so that the id cannot belong to anybody else.
    virtual void signal_group(ProcessId leader, int signal) = 0;
    virtual void signal_process(ProcessId pid, int signal) = 0;
    // True while a process (a zombie too) is in the group `leader` led. Sends no signal; the
    // id cannot be given to a new group while the old one has a member.
    virtual bool group_exists(ProcessId leader) = 0;
    // One child that has ended, or been stopped, without waiting; nothing when none has.
    virtual std::optional<Reaped> reap() = 0;
    // Waits for every child to end, reaping each: the last resort of a run that cannot go
    // on, after SIGKILL to all.
    virtual void reap_all() = 0;
    // Our live children: job shells and, as we are their subreaper, what jobs left behind
    // once its parent died.
    virtual std::vector<ProcessId> children() = 0;
    // For each trace, the live processes (not zombies; any user's where we may look) that
    // hold its token or are in its group: what a job left behind, wherever it moved (setsid)
    // in the process tree, or whatever descriptors it closed (Python's subprocess).
    virtual std::vector<std::vector<ProcessInfo>>
    find_processes(std::span<const JobTrace> jobs) = 0;
};

} // namespace gpusched
