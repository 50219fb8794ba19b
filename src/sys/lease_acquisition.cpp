#include <gpusched/sys/lease_acquisition.hpp>

#include <gpusched/sys/poll_timeout.hpp>
#include <gpusched/sys/system_error.hpp>

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace gpusched::sys {
namespace {

using Clock = std::chrono::steady_clock;

int poll_timeout_ms(const std::optional<Clock::time_point>& deadline)
{
    if (!deadline) {
        return -1;
    }
    return poll_timeout(std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()));
}

} // namespace

LeaseAcquisition acquire_leases(HostLeases& leases, SignalChannel& signals,
                                const AcquireOptions& options)
{
    bool waiting = false;
    while (true) {
        GpuSlots held;
        GpuSlots refused;
        const auto allowed = [&options](GpuSlot slot) {
            return !options.among || std::find(options.among->begin(), options.among->end(),
                                               slot) != options.among->end();
        };
        for (GpuSlot slot = 0; slot < leases.size() && held.size() < options.count; ++slot) {
            if (allowed(slot)) {
                (leases.try_take(slot) ? held : refused).push_back(slot);
            }
        }
        if (held.size() == options.count) {
            leases.cancel_waits();
            for (GpuSlot slot = 0; slot < leases.size(); ++slot) {
                if (std::find(held.begin(), held.end(), slot) == held.end()) {
                    leases.release(slot); // granted to a waiter, but not needed
                }
            }
            return {LeaseAcquisition::Result::acquired, held, {}, 0};
        }
        if (!options.wait) {
            for (const auto slot : held) {
                leases.release(slot);
            }
            return {LeaseAcquisition::Result::none_free, {}, refused, 0};
        }
        for (const auto slot : refused) {
            leases.wait_for(slot);
        }
        if (!std::exchange(waiting, true) && options.on_wait) {
            options.on_wait(refused);
        }
        // What we hold is kept while we wait for the rest (a GPU handed over to us is not
        // given up again), except what a process that began to wait before us waits for:
        // the oldest waiter always gets all it needs, so two waiters never hold each other's
        // GPUs forever.
        for (const auto slot : held) {
            if (leases.hand_over(slot, HostLeases::k_no_time_limit, leases.wait_since())) {
                leases.wait_for(slot);
            }
        }

        std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
        leases.add_poll_fds(fds);
        leases.add_holder_poll_fds(fds);
        const int ready = poll(fds.data(), fds.size(), poll_timeout_ms(options.deadline));
        if (ready < 0 && errno != EINTR) {
            throw_errno("poll");
        }
        const auto give_up = [&] {
            leases.cancel_waits();
            for (GpuSlot slot = 0; slot < leases.size(); ++slot) {
                leases.release(slot);
            }
        };
        if (ready == 0) {
            give_up();
            return {LeaseAcquisition::Result::timed_out, {}, {}, 0};
        }
        for (const int signal : signals.take_pending()) {
            if (signal != SIGCHLD) {
                give_up();
                return {LeaseAcquisition::Result::signalled, {}, {}, signal};
            }
        }
        for (const auto& fd : fds) {
            if (fd.revents != 0) {
                leases.on_ready(fd); // what it grants, the next turn takes
            }
        }
    }
}

} // namespace gpusched::sys
