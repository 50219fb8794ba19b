#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

class SignalChannel;

// A probe child's command line: `program` run with `args` (argv[0] first) and then the GPU
// ids it is asked about. It prints its answer on stdout and is killed after `timeout`.
struct ProbeCommand {
    std::string program;
    std::vector<std::string> args;
    std::chrono::milliseconds timeout{30'000};
};

// What a probe printed, or why it gave no answer.
struct ProbeAnswer {
    std::string output;
    std::string problem;
};

// One probe child while it runs. It leads a process group of its own (a Ctrl-C on the
// terminal is gpusched's to handle), gets SIGKILL when gpusched dies, even by SIGKILL
// (PR_SET_PDEATHSIG), and is killed when this object goes, on every path. Nothing here
// blocks: the owner waits on fd() in its own poll, reaps the child itself or lets
// try_reap() do it, and gives up at deadline().
class ProbeProcess {
public:
    using Clock = std::chrono::steady_clock;

    // Starts `command` with `ids` after its arguments and `child_mask` as its signal mask.
    // Throws std::system_error when it cannot.
    ProbeProcess(const ProbeCommand& command, const std::vector<std::string>& ids,
                 const sigset_t& child_mask);
    ~ProbeProcess();
    ProbeProcess(const ProbeProcess&) = delete;
    ProbeProcess& operator=(const ProbeProcess&) = delete;

    // The answer's pipe while it is open; -1 once read to its end.
    int fd() const { return m_pipe.get(); }
    Clock::time_point deadline() const { return m_deadline; }
    // gpusched was stopped (Ctrl-Z) for `stopped`, and the probe with it.
    void postpone(Clock::duration stopped) { m_deadline += stopped; }
    // Reads what the pipe holds.
    void on_readable();
    // Takes the exit of `pid`, reaped by the owner's waitpid(-1); false when it is not ours.
    bool on_exit(pid_t pid, int wait_status);
    // Reaps the child if it has ended; true once it is reaped.
    bool try_reap();
    bool reaped() const { return m_reaped; }
    // SIGKILL for its process group; it is still to be reaped.
    void kill();

    // Once the pipe has ended and the child is reaped: what it printed, or why not.
    std::optional<ProbeAnswer> answer() const;
    // The problem to report when it is killed at its deadline.
    std::string timeout_problem() const;
    // "gpusched __probe-usage": what it is called in messages.
    const std::string& name() const { return m_name; }

private:
    std::string m_name;
    std::chrono::milliseconds m_timeout;
    Clock::time_point m_deadline;
    pid_t m_pid = -1;
    UniqueFd m_pipe;
    std::string m_output;
    bool m_too_long = false;
    bool m_killed = false;
    bool m_reaped = false;
    int m_wait_status = 0;
};

// Waits for `probe`'s answer in a poll that also takes `signals` (SIGCHLD among them, which
// tells when the probe has ended), for the callers that have nothing else to do meanwhile.
// SIGINT, SIGTERM and SIGHUP kill the probe and throw Interrupted; other signals are
// delivered again once the wait is over.
ProbeAnswer wait_for_answer(ProbeProcess& probe, SignalChannel& signals);

} // namespace gpusched::sys
