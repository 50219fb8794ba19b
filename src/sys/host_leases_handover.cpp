// Handing a lease over at a job boundary, and taking one handed to us (lease_handover.hpp).
#include <gpusched/sys/host_leases.hpp>

#include <gpusched/lease_names.hpp>
#include <gpusched/lease_waiter_line.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>

namespace gpusched::sys {
namespace {

constexpr std::size_t k_most_waiters = 32; // per lease

} // namespace

bool HostLeases::any_waiting() const
{
    for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
        if (waiting(slot)) {
            return true;
        }
    }
    return false;
}

// Bound while we wait, so that `gpusched status` can say who waits, since when, and for how
// many GPUs; it goes with us, whatever ends us.
void HostLeases::set_waiting_for_room(bool waiting)
{
    if (waiting && m_wait_since == 0) {
        m_wait_since = wait_start(seconds_since_epoch());
    }
    m_waiting_for_room = waiting;
    update_wait_name();
}

void HostLeases::update_wait_name()
{
    if (!any_waiting() && !m_waiting_for_room) {
        m_wait_name.reset();
        m_wait_since = 0;
        return;
    }
    if (m_wait_name) {
        return;
    }
    const auto name =
        lease_wait_name(m_space, {static_cast<long>(getpid()),
                                  static_cast<long long>(m_wait_since), m_wanted});
    if (auto bound = bind_lease(name)) {
        m_wait_name = std::move(*bound);
    }
}

// What we tell the holder of a lease we wait for; written into the connection (the holder
// reads it once it accepts the connection, at a job boundary). Best effort: a holder that
// cannot read it simply does not hand the lease over, and lets it go as before.
void HostLeases::tell_holder(const Lease& lease) const
{
    if (!lease.connection) {
        return;
    }
    // The lease we want, not the one we wait on: a MIG instance waiting for its whole GPU's
    // holder is not handed the whole GPU (it waits for it to be let go, as before).
    const auto line =
        format_waiter_line({lease.name, m_wait_since, m_used, m_weight, m_wanted});
    [[maybe_unused]] const auto written =
        send(lease.connection.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void HostLeases::note_usage(double used)
{
    m_used = used;
    for (const auto& lease : m_leases) {
        tell_holder(lease);
    }
}

// The waiters that connected since the last look, and what each has said since.
void HostLeases::accept_waiters(Lease& lease)
{
    // Each waiter kept costs a descriptor: a few dozen are kept at most, so that a flood of
    // connections (anyone may connect) never leaves the run's jobs without descriptors. The
    // others stay in the kernel's queue, and take the lease when it is let go, as before.
    while (lease.waiters.size() < k_most_waiters) {
        UniqueFd connection(accept4(lease.socket.get(), nullptr, nullptr,
                                    SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!connection) {
            break; // EAGAIN: none left (any other error: looked at again next boundary)
        }
        lease.waiters.push_back({std::move(connection), {}, std::nullopt, false});
    }
    std::array<char, 512> buffer{};
    for (auto& waiter : lease.waiters) {
        while (true) {
            const auto got = read(waiter.connection.get(), buffer.data(), buffer.size());
            if (got == 0) {
                waiter.gone = true; // a waiter that ended, or someone who only asked who holds
                break;
            }
            if (got < 0) {
                if (errno != EAGAIN && errno != EINTR) {
                    waiter.gone = true;
                }
                if (errno != EINTR) {
                    break;
                }
                continue;
            }
            waiter.unread.append(buffer.data(), static_cast<std::size_t>(got));
            if (waiter.unread.size() > 64 * 1024) {
                waiter.gone = true; // not a waiter's lines
                break;
            }
        }
        // The latest complete line says where the waiter stands now.
        for (auto end = waiter.unread.find('\n'); end != std::string::npos;
             end = waiter.unread.find('\n')) {
            if (auto line = parse_waiter_line(std::string_view(waiter.unread).substr(0, end))) {
                waiter.line = std::move(*line);
            }
            waiter.unread.erase(0, end + 1);
        }
        if (!waiter.line) {
            // A waiter writes its line as it connects: one that has said nothing valid is not
            // one (a `status` asking who holds the lease, a stranger). Closed; a waiter that
            // was about to write connects again and is heard at the next boundary.
            waiter.gone = true;
        }
    }
    std::erase_if(lease.waiters, [](const Waiter& waiter) { return waiter.gone; });
}

void HostLeases::add_holder_poll_fds(std::vector<pollfd>& fds) const
{
    for (const auto& lease : m_leases) {
        if (!lease.socket || lease.inherited >= 0) {
            continue;
        }
        if (lease.waiters.size() < k_most_waiters) {
            // A connection waits to be accepted (past the limit it would stay readable, and
            // wake us again and again, until one of those we keep goes).
            fds.push_back({lease.socket.get(), POLLIN, 0});
        }
        for (const auto& waiter : lease.waiters) {
            fds.push_back({waiter.connection.get(), POLLIN, 0});
        }
    }
}

std::optional<LeaseTaker> HostLeases::hand_over(GpuSlot slot, double used, double waited_before)
{
    auto& lease = m_leases.at(slot);
    if (!lease.socket || lease.inherited >= 0) {
        return std::nullopt; // an inherited lease is its taker's to give
    }
    // `used` is the bar a waiter's share is held to, not our own GPU time: infinity (hand it
    // to anyone) must never reach a holder we wait for ourselves, which would refuse that
    // line and never hand us its GPU (note_usage tells them our time).
    accept_waiters(lease);
    // Served in the order they began to wait; while we wait ourselves, only those that
    // began before us (as both sides tell it), so that the oldest waiter always completes.
    const auto began_before_us = [&](const Waiter& waiter) {
        if (waited_before == k_no_time_limit) {
            return true;
        }
        const auto who = taker_of(waiter.connection.get());
        return who && waited_first(waiter.line->since, who->pid, waited_before, getpid());
    };
    std::vector<Waiter*> owed;
    for (auto& waiter : lease.waiters) {
        if (waiter.line && waiter.line->lease == lease.name &&
            owed_the_gpu(*waiter.line, used, m_weight) && began_before_us(waiter)) {
            owed.push_back(&waiter);
        }
    }
    std::stable_sort(owed.begin(), owed.end(), [](const Waiter* a, const Waiter* b) {
        return a->line->since < b->line->since;
    });
    std::vector<int> sockets{lease.socket.get()};
    if (lease.share) {
        sockets.push_back(lease.share.get());
    }
    for (auto* waiter : owed) {
        const auto who = taker_of(waiter->connection.get());
        if (send_lease(waiter->connection.get(), sockets)) {
            if (lease.record) {
                // Ours no longer: `status` shows the kernel's word until the new holder
                // writes its own record.
                [[maybe_unused]] const int emptied = ftruncate(lease.record.get(), 0);
            }
            release(slot);
            return who.value_or(LeaseTaker{});
        }
        waiter->gone = true; // it ended in the meantime: the next one
    }
    std::erase_if(lease.waiters, [](const Waiter& waiter) { return waiter.gone; });
    return std::nullopt;
}

// Sockets handed to us for `lease`: ours once they are what they say (each a listening socket
// bound to the lease's names; a holder could send anything).
bool HostLeases::adopt(Lease& lease, std::vector<UniqueFd> sockets)
{
    const std::size_t expected = lease.share_name.empty() ? 1 : 2;
    if (sockets.size() != expected || !holds_lease(sockets[0].get(), lease.name) ||
        (expected == 2 && !holds_lease(sockets[1].get(), lease.share_name))) {
        return false;
    }
    lease.socket = UniqueFd(fcntl(sockets[0].get(), F_DUPFD_CLOEXEC, m_first_private_fd));
    if (expected == 2) {
        lease.share = UniqueFd(fcntl(sockets[1].get(), F_DUPFD_CLOEXEC, m_first_private_fd));
    }
    // listen() again: the kernel then names us, not the process that handed it over, to
    // whoever asks who holds it (SO_PEERCRED of a connection to it).
    if (lease.socket) {
        listen(lease.socket.get(), INT_MAX);
    }
    if (lease.share) {
        listen(lease.share.get(), INT_MAX);
    }
    if (!lease.socket || (expected == 2 && !lease.share)) {
        // Out of descriptors: the lease is let go (as our copies close), and waited for.
        lease.socket.reset();
        lease.share.reset();
        return false;
    }
    lease.blocker = lease.name;
    lease.blocked = Blocker::own_name;
    lease.connection.reset();
    lease.retry = false;
    lease.record_size = 0;
    lease.taken_at = seconds_since_epoch();
    return true;
}

} // namespace gpusched::sys
