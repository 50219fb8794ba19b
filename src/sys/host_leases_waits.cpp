// Waiting for a lease without polling, and without a helper process: a connection to the
// holder's socket hangs up when its last descriptor closes, which frees the name.
#include <gpusched/sys/host_leases.hpp>

#include <gpusched/lease_waiter_line.hpp>

#include <gpusched/sys/lease_handover.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/wall_clock.hpp>

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <system_error>

namespace gpusched::sys {
namespace {

using namespace std::chrono_literals;

// A wait with no connection looks again at once, then less and less often. It happens in a
// moment's race (the holder let go, or has bound and not yet listened) or when the holder's
// queue is full; only in the last case does it last.
std::chrono::nanoseconds retry_delay(unsigned turn)
{
    if (turn == 0) {
        return 1ns; // zero would disarm the timer
    }
    return std::min<std::chrono::nanoseconds>(10ms * (1U << std::min(turn, 8U)), 2s);
}

// Runs `attempt`; false when it found no descriptor free (EMFILE, ENFILE): a wait that
// cannot connect or bind now is looked at again, as one whose holder does not listen.
template <class Attempt>
bool with_descriptors(Attempt attempt)
{
    try {
        attempt();
        return true;
    } catch (const std::system_error& error) {
        if (error.code().value() != EMFILE && error.code().value() != ENFILE) {
            throw;
        }
        return false;
    }
}

} // namespace

bool HostLeases::waiting(GpuSlot slot) const
{
    const auto& lease = m_leases.at(slot);
    return lease.connection || lease.retry;
}

void HostLeases::wait_for(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    if (!lease.socket && !waiting(slot)) {
        if (!any_waiting() && !m_waiting_for_room) {
            m_wait_since = wait_start(seconds_since_epoch());
        }
        start_wait(lease);
        update_wait_name();
    }
}

void HostLeases::start_wait(Lease& lease)
{
    std::optional<UniqueFd> connection;
    if (with_descriptors([&] { connection = connect_to_lease(lease.blocker); }) && connection) {
        lease.connection = std::move(*connection);
        tell_holder(lease);
        return;
    }
    lease.retry = true;
    arm_retry();
}

// The lease may be free: take it, or, when another waiter was quicker, wait for that one.
// Short of descriptors (a socket to bind, the table of names to read), it is tried again.
void HostLeases::take_or_wait(GpuSlot slot, GpuSlots& granted)
{
    auto& lease = m_leases[slot];
    bool taken = false;
    if (!with_descriptors([&] { taken = take(lease); })) {
        lease.retry = true;
        arm_retry();
    } else if (taken) {
        granted.push_back(slot);
    } else {
        start_wait(lease);
    }
}

void HostLeases::arm_retry()
{
    if (m_retry_armed) {
        return;
    }
    if (!m_retry) {
        m_retry.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
        if (!m_retry) {
            throw_errno("timerfd_create");
        }
    }
    const auto delay = retry_delay(m_retry_turns++);
    itimerspec when{};
    when.it_value.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(delay).count();
    when.it_value.tv_nsec = (delay % 1s).count();
    if (timerfd_settime(m_retry.get(), 0, &when, nullptr) != 0) {
        throw_errno("timerfd_settime");
    }
    m_retry_armed = true;
}

void HostLeases::add_poll_fds(std::vector<pollfd>& fds) const
{
    // A hang-up (the lease let go) is always reported; what the holder writes is the lease
    // itself, handed over.
    for (const auto& lease : m_leases) {
        if (lease.connection) {
            fds.push_back({lease.connection.get(), POLLIN, 0});
        }
    }
    if (m_retry_armed) {
        fds.push_back({m_retry.get(), POLLIN, 0});
    }
}

std::optional<GpuSlots> HostLeases::on_ready(const pollfd& ready)
{
    GpuSlots granted;
    if (m_retry_armed && ready.fd == m_retry.get()) {
        std::uint64_t expirations = 0;
        if (read(m_retry.get(), &expirations, sizeof expirations) < 0 && errno != EAGAIN) {
            throw_errno("read timerfd");
        }
        m_retry_armed = false;
        for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
            auto& lease = m_leases[slot];
            if (lease.retry) {
                lease.retry = false;
                take_or_wait(slot, granted);
            }
        }
        if (!m_retry_armed) {
            m_retry_turns = 0; // every wait has its connection, or has ended
        }
        update_wait_name();
        return granted;
    }
    for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
        auto& lease = m_leases[slot];
        if (lease.connection && lease.connection.get() == ready.fd) {
            if (adopt(lease, receive_lease(lease.connection.get()))) {
                granted.push_back(slot);
            } else {
                lease.connection.reset();
                take_or_wait(slot, granted);
            }
            update_wait_name();
            return granted;
        }
    }
    return std::nullopt;
}

GpuSlots HostLeases::cancel_waits()
{
    GpuSlots cancelled;
    for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
        auto& lease = m_leases[slot];
        lease.whole_wait.reset();
        if (waiting(slot)) {
            lease.connection.reset();
            lease.retry = false;
            cancelled.push_back(slot);
        }
    }
    if (m_retry_armed) {
        const itimerspec disarm{};
        timerfd_settime(m_retry.get(), 0, &disarm, nullptr);
        m_retry_armed = false;
    }
    m_retry_turns = 0;
    update_wait_name();
    return cancelled;
}

} // namespace gpusched::sys
