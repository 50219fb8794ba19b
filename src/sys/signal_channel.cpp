#include <gpusched/sys/signal_channel.hpp>

#include <gpusched/sys/system_error.hpp>

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

} // namespace gpusched::sys
