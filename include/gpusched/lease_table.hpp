#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/lease_record.hpp>

#include <cstddef>
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

    // Writes who holds a held lease (our `jobs` on it) for `gpusched status`.
    virtual void describe(GpuSlot slot, std::vector<LeaseHolder> jobs,
                          std::optional<std::size_t> queued) = 0;
};

} // namespace gpusched
