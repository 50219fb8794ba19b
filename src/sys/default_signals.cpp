#include <gpusched/sys/default_signals.hpp>

#include <unistd.h>

namespace gpusched::sys {

sigset_t no_signals()
{
    sigset_t none;
    sigemptyset(&none);
    return none;
}

sigset_t all_signals()
{
    sigset_t all;
    sigfillset(&all);
    return all;
}

void reset_signals_for_exec()
{
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    // SIGKILL and SIGSTOP refuse a change, and the C library's own signals may too: each
    // refusal leaves that signal as it was, which is all that can be done.
    for (int signal = 1; signal < NSIG; ++signal) {
        sigaction(signal, &default_action, nullptr);
    }
    const auto none = no_signals();
    sigprocmask(SIG_SETMASK, &none, nullptr);
}

void end_after(unsigned seconds)
{
    // Started with SIGALRM ignored or blocked, the process would outlive its deadline.
    signal(SIGALRM, SIG_DFL);
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alarm_only, nullptr);
    alarm(seconds);
}

} // namespace gpusched::sys
