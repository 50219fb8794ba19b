#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <csignal>
#include <initializer_list>
#include <vector>

namespace gpusched::sys {

// Blocks a set of signals and delivers them through a signalfd, so the event loop waits for
// signals, input and child exits in one poll, with no handler and no race. Construct it
// before any thread starts: a thread created earlier would still receive the signals.
class SignalChannel {
public:
    explicit SignalChannel(std::initializer_list<int> signals);
    ~SignalChannel();
    SignalChannel(const SignalChannel&) = delete;
    SignalChannel& operator=(const SignalChannel&) = delete;

    int fd() const { return m_fd.get(); }
    // Every signal delivered since the last call, in arrival order; never blocks.
    std::vector<int> take_pending();
    // Stops the process as SIGTSTP's default action does, and returns once it is continued
    // (SIGCONT: `fg` or `bg`). The shell sees it stopped by SIGTSTP, as after any Ctrl-Z. Where
    // the kernel will not stop it (a process group with no parent in the session, as under
    // nohup or setsid), it returns at once.
    static void stop_as_sigtstp();
    // The mask in force before construction: children start with it.
    const sigset_t& original_mask() const { return m_original_mask; }

private:
    UniqueFd m_fd;
    sigset_t m_original_mask{};
};

} // namespace gpusched::sys
