#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <csignal>
#include <initializer_list>
#include <vector>

namespace gpusched::sys {

// The signals sent to gpusched, as the runner takes them: a SignalChannel in a run, a test's
// script in a test of the runner's rules.
class SignalSource {
public:
    virtual ~SignalSource() = default;
    // Ready to read while a signal is pending.
    virtual int fd() const = 0;
    // Every signal delivered since the last call, in arrival order; never blocks.
    virtual std::vector<int> take_pending() = 0;
    // Stops gpusched as Ctrl-Z does, and returns once it is continued.
    virtual void stop_self() = 0;
    // The mask in force before the signals were taken over: children start with it.
    virtual const sigset_t& original_mask() const = 0;
};

// Blocks a set of signals and delivers them through a signalfd, so the event loop waits for
// signals, input and child exits in one poll, with no handler and no race. Construct it
// before any thread starts: a thread created earlier would still receive the signals.
class SignalChannel final : public SignalSource {
public:
    explicit SignalChannel(std::initializer_list<int> signals);
    ~SignalChannel();
    SignalChannel(const SignalChannel&) = delete;
    SignalChannel& operator=(const SignalChannel&) = delete;

    int fd() const override { return m_fd.get(); }
    std::vector<int> take_pending() override;
    void stop_self() override { stop_as_sigtstp(); }
    // Stops the process as SIGTSTP's default action does, and returns once it is continued
    // (SIGCONT: `fg` or `bg`). The shell sees it stopped by SIGTSTP, as after any Ctrl-Z. Where
    // the kernel will not stop it (a process group with no parent in the session, as under
    // nohup or setsid), it returns at once.
    static void stop_as_sigtstp();
    // The mask in force before construction.
    const sigset_t& original_mask() const override { return m_original_mask; }

private:
    UniqueFd m_fd;
    sigset_t m_original_mask{};
};

} // namespace gpusched::sys
