#include <gpusched/sys/signal_channel.hpp>

#include <gpusched/sys/system_error.hpp>

#include <pthread.h>
#include <sys/signalfd.h>

#include <cerrno>

namespace gpusched::sys {

SignalChannel::SignalChannel(std::initializer_list<int> signals)
{
    sigset_t mask;
    sigemptyset(&mask);
    for (const int signal : signals) {
        sigaddset(&mask, signal);
    }
    if (sigprocmask(SIG_BLOCK, &mask, &m_original_mask) != 0) {
        throw_errno("sigprocmask");
    }
    m_fd.reset(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!m_fd) {
        throw_errno("signalfd");
    }
}

SignalChannel::~SignalChannel()
{
    sigprocmask(SIG_SETMASK, &m_original_mask, nullptr);
}

std::vector<int> SignalChannel::take_pending()
{
    std::vector<int> signals;
    signalfd_siginfo info{};
    while (true) {
        const auto got = ::read(m_fd.get(), &info, sizeof info);
        if (got == static_cast<ssize_t>(sizeof info)) {
            signals.push_back(static_cast<int>(info.ssi_signo));
            continue;
        }
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 && errno != EAGAIN) {
            throw_errno("read signalfd");
        }
        return signals;
    }
}

void SignalChannel::stop_as_sigtstp()
{
    // SIGTSTP is blocked, and was read from the signalfd: one is raised again with its default
    // action and let through alone. Raised while blocked, it is pending once however many more
    // come, and it stops the process as the mask lets it through.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    struct sigaction previous {};
    sigaction(SIGTSTP, &default_action, &previous);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTSTP);
    raise(SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &stop, nullptr); // stopped here until SIGCONT
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    sigaction(SIGTSTP, &previous, nullptr);
}

} // namespace gpusched::sys
