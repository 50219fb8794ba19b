#pragma once

#include <gpusched/gpu_memory.hpp>
#include <gpusched/gpu_pool.hpp>
#include <gpusched/lease_record.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// The host-wide leases of a pool's GPUs, as the Placement uses them: one lease per GPU,
// shared with every process on this machine that schedules onto the same GPUs. The real one
// is sys::HostLeases (sockets, records, waits in the event loop's poll); the Placement's tests
// pass a fake that another process's holds and hand-overs are written into.
class LeaseTable {
public:
    // A hand-over with no limit on when its waiter began to wait.
    static constexpr double k_no_time_limit = 1e300;

    virtual ~LeaseTable() = default;

    // Takes the lease of `slot` unless another process holds it; true when it is ours.
    virtual bool try_take(GpuSlot slot) = 0;
    virtual bool held(GpuSlot slot) const = 0;
    // Every descriptor of a held lease, appended to `fds`: a job inherits them all.
    virtual void append_fds(GpuSlot slot, std::vector<int>& fds) const = 0;
    // Lets go of our own hold; jobs that inherited a descriptor keep the lease until they end.
    virtual void release(GpuSlot slot) = 0;

    // Starts waiting for the lease another process holds; waiting() is true until it is ours.
    virtual void wait_for(GpuSlot slot) = 0;
    virtual bool waiting(GpuSlot slot) const = 0;
    // Stops every wait; returns the GPUs waited for.
    virtual GpuSlots cancel_waits() = 0;
    // What a refused lease waits for when it is not the GPU's own lease (a MIG instance's
    // GPU), else "".
    virtual std::string blocked_by(GpuSlot slot) const = 0;
    // Who holds the lease of `slot`, as far as can be told.
    virtual LeaseOwner holder(GpuSlot slot) const = 0;

    // Fair sharing: what our waits tell the holders (how many GPUs a job of ours wants, the
    // GPU-seconds our ended jobs used), and the hand-over at a job boundary to a waiter owed
    // the GPU given `used`, ours so far; who got it.
    virtual void set_wanted(std::size_t gpus) = 0;
    virtual void note_usage(double used) = 0;
    virtual std::optional<LeaseTaker> hand_over(GpuSlot slot, double used,
                                                double waited_before) = 0;

    // Memory shares (lease_memory_share_name): a job promised `bytes` of a GPU shares it with
    // other processes' such jobs instead of taking its lease whole. Under the GPU's admission,
    // what the others promised and their jobs do not use yet is read, `fits` says whether
    // our promises still fit beside it, and the job's share is bound, its descriptor
    // appended to `fds`. The answer `whole`: the job takes the lease whole instead (ours
    // already, a MIG instance, no name fits); `no_room`: not now, and `promised_elsewhere`
    // (all there is, when the GPU is held whole elsewhere or another admission took too long)
    // is what to count until the next look.
    enum class Share { shared, whole, no_room };
    struct ShareAnswer {
        Share share = Share::whole;
        std::uint64_t promised_elsewhere = 0;
    };
    using FitsBeside = std::function<bool(std::uint64_t promised_elsewhere)>;
    virtual ShareAnswer try_share(GpuSlot slot, AllocationId id, std::uint64_t bytes,
                                  const FitsBeside& fits, std::vector<int>& fds) = 0;
    // Our descriptor of the job's share goes; the job's own keeps it until the job ends.
    virtual void release_share(GpuSlot slot, AllocationId id) = 0;
    // At each look at the GPU's memory: what other processes promised their jobs there
    // beyond what those jobs use (`reading`'s processes, by the pid tree of each share's
    // holder); all there is while another process holds the GPU's lease whole.
    virtual std::uint64_t promised_elsewhere(GpuSlot slot, const GpuMemoryReading& reading) = 0;

    // Writes who holds a held lease (our `jobs` on it) for `gpusched status`.
    virtual void describe(GpuSlot slot, std::vector<LeaseHolder> jobs,
                          std::optional<std::size_t> queued) = 0;
};

} // namespace gpusched
