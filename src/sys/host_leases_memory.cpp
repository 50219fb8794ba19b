// Memory shares: a job promised part of a whole GPU's memory binds a name that says who
// promised how much (lease_memory_share_name) instead of taking the GPU's lease, and every
// process that places such jobs reads the others' promises from the names bound. A process
// admits a share under the GPU's admission name, so that two never count on the same free
// memory; a whole GPU's lease and its memory shares exclude each other, each side looking
// for the other once its own name is bound (bind_names, and try_share below).
#include <gpusched/sys/host_leases.hpp>

#include <gpusched/lease_names.hpp>
#include <gpusched/sys/descriptor_copy.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/process_tree.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <thread>

namespace gpusched::sys {
namespace {

constexpr std::uint64_t k_everything = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t k_one_mib = std::uint64_t{1} << 20;
// No promise read from a name counts for more: a GPU with a thousand TiB is not yet made, and
// a name claiming more (someone else's, bound by hand) cannot make the sum wrap.
constexpr std::uint64_t k_most_promised_mib = std::uint64_t{1} << 30;
// How long an admission waits for another process's (held for the few microseconds of
// reading names and binding one) before this look gives up and the next tries again.
constexpr int k_admission_turns = 50;
constexpr auto k_admission_turn = std::chrono::milliseconds(1);

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b)
{
    return a > k_everything - b ? k_everything : a + b;
}

std::optional<UniqueFd> admit(const std::string& admission)
{
    for (int turn = 0; turn < k_admission_turns; ++turn) {
        if (auto bound = bind_lease(admission)) {
            return bound;
        }
        std::this_thread::sleep_for(k_admission_turn);
    }
    return std::nullopt;
}

} // namespace

bool HostLeases::own_share(const Lease& lease, const std::string& name) const
{
    return std::any_of(lease.memory_shares.begin(), lease.memory_shares.end(),
                       [&name](const auto& share) { return share.second.name == name; }) ||
           std::find(lease.inherited_shares.begin(), lease.inherited_shares.end(), name) !=
               lease.inherited_shares.end();
}

// What the other holders promised their jobs on the GPU beyond what those jobs use now (their
// use is in the look's, as someone else's). The processes under a holder's pid are known, not
// which of its jobs each belongs to, so a holder's use is taken as the worst case for us: one
// job using it all, beyond its promise, while the others have allocated nothing. That is its
// promises less its use, but never less by more than its smallest promise; a holder with one
// job is counted exactly. A holder that is gone leaves its jobs without a tree to tie them to,
// and they count at both their promise and their use until they end: too much, never too
// little. Shares we hold, or were started inside (a gpusched in a job of one), are ours.
// `names`: those bound under the GPU's lease name.
std::uint64_t HostLeases::promised_by_others(const Lease& lease,
                                             const std::vector<std::string>& names) const
{
    struct Promises {
        std::uint64_t sum = 0;
        std::uint64_t smallest = k_everything;
        std::uint64_t used = 0;
    };
    std::map<long, Promises> by_holder;
    for (const auto& name : names) {
        if (own_share(lease, name)) {
            continue;
        }
        if (const auto share = parse_lease_memory_share(lease.memory_prefix, name)) {
            const auto bytes = std::min(share->mib, k_most_promised_mib) * k_one_mib;
            auto& promises = by_holder[share->pid];
            promises.sum = saturating_add(promises.sum, bytes);
            promises.smallest = std::min(promises.smallest, bytes);
        }
    }
    if (by_holder.empty()) {
        return 0;
    }
    // Each process's ancestry is walked once, whatever the number of holders named.
    for (const auto& [pid, bytes] : lease.processes) {
        for (const auto ancestor : ancestry(static_cast<pid_t>(pid))) {
            if (const auto holder = by_holder.find(ancestor); holder != by_holder.end()) {
                holder->second.used = saturating_add(holder->second.used, bytes);
                break;
            }
        }
    }
    std::uint64_t sum = 0;
    for (const auto& [holder, promises] : by_holder) {
        sum = saturating_add(sum, promises.sum - std::min(promises.used, promises.smallest));
    }
    return sum;
}

// While memory shares keep the GPU from a lease we want whole, no new share is admitted:
// the wait ends once those bound now end, whatever comes after.
void HostLeases::note_whole_wait(Lease& lease) const
{
    if (lease.blocked != Blocker::memory_share) {
        lease.whole_wait.reset();
    } else if (!lease.whole_wait && lease.whole_wait_name) {
        // Bound by another waiter already: it says the same.
        lease.whole_wait = bind_lease(*lease.whole_wait_name).value_or(UniqueFd());
    }
}

bool HostLeases::others_wait_whole(const Lease& lease, const std::vector<std::string>& names) const
{
    return !lease.whole_wait && lease.whole_wait_name &&
           std::find(names.begin(), names.end(), *lease.whole_wait_name) != names.end();
}

LeaseTable::ShareAnswer HostLeases::try_share(GpuSlot slot, AllocationId id, std::uint64_t bytes,
                                              const FitsBeside& fits, std::vector<int>& fds)
{
    auto& lease = m_leases.at(slot);
    if (lease.memory_prefix.empty() || lease.socket || lease.inherited >= 0) {
        return {Share::whole}; // a MIG instance; or the GPU is ours whole already
    }
    const auto mib = bytes / k_one_mib + (bytes % k_one_mib != 0 ? 1 : 0);
    const auto name =
        lease_memory_share_name(m_space, lease.key, {static_cast<long>(getpid()), id, mib});
    if (!name) {
        return {Share::whole};
    }
    const auto admission = admit(lease.admission);
    if (!admission) {
        return {Share::no_room, k_everything};
    }
    const auto names = bound_lease_names(lease.name);
    if (!names || others_wait_whole(lease, *names)) {
        // Who promised what cannot be told now; or a job waits for the GPU whole.
        return {Share::no_room, k_everything};
    }
    const auto promised = promised_by_others(lease, *names);
    if (!fits(promised)) {
        return {Share::no_room, promised};
    }
    auto share = bind_lease(*name);
    if (!share) {
        // A job of an earlier process with our pid still holds the name: the lease whole.
        return {Share::whole};
    }
    if (lease_is_bound(lease.name)) {
        return {Share::no_room, k_everything}; // held whole elsewhere: our share goes again
    }
    auto kept = duplicate_above(share->get(), m_first_private_fd);
    fds.push_back(kept.get());
    lease.memory_shares[id] = MemoryShare{std::move(kept), *name};
    return {Share::shared, promised};
}

void HostLeases::release_share(GpuSlot slot, AllocationId id)
{
    m_leases.at(slot).memory_shares.erase(id);
}

std::uint64_t HostLeases::promised_elsewhere(GpuSlot slot, const GpuMemoryReading& reading)
{
    auto& lease = m_leases.at(slot);
    lease.processes = reading.processes;
    if (lease.memory_prefix.empty() || lease.socket || lease.inherited >= 0) {
        return 0; // a MIG instance, or ours whole: no one else shares it
    }
    // One read of the names under the GPU's: its lease, and its memory shares. (Asking the
    // lease's socket would leave a connection in its holder's queue at every look.)
    const auto names = bound_lease_names(lease.name);
    if (!names) {
        return k_everything;
    }
    if (std::find(names->begin(), names->end(), lease.name) != names->end() ||
        others_wait_whole(lease, *names)) {
        return k_everything; // another process has it whole, or waits for it whole
    }
    return promised_by_others(lease, *names);
}

} // namespace gpusched::sys
