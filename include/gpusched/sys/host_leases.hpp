#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/sys/lock_directory.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// This process's leases on the GPUs of its pool, one per GPU whatever the number of its
// jobs there. A lease is held on one open file description of the GPU's lock file; each
// job on the GPU inherits a descriptor of it, so the lease lasts while this process or any
// of those jobs (or anything they started) still holds one. So two gpusched processes never
// share a GPU, and one that is killed keeps its GPUs leased exactly as long as its jobs run.
class HostLeases {
public:
    HostLeases(LockDirectory directory, std::vector<std::string> keys);
    ~HostLeases();
    HostLeases(const HostLeases&) = delete;
    HostLeases& operator=(const HostLeases&) = delete;

    std::size_t size() const { return m_leases.size(); }
    const std::string& key(GpuSlot slot) const { return m_leases.at(slot).key; }
    const LockDirectory& directory() const { return m_directory; }

    // Takes the lease of `slot` unless another process holds it; true when it is ours (now
    // or already). Leases this process inherited (gpusched inside a gpusched job) are ours.
    bool try_take(GpuSlot slot);
    bool held(GpuSlot slot) const { return m_leases.at(slot).locked; }
    // The descriptor of a held lease, for a job to inherit.
    int fd(GpuSlot slot) const;
    // Lets go of our descriptor; jobs that inherited one keep the lease until they end.
    void release(GpuSlot slot);

    // Writes who holds a held lease (us, running `jobs`) into its lock file, for
    // `gpusched status`.
    void describe(GpuSlot slot, std::vector<LeaseHolder> jobs);
    // What the lock file says about the lease's holder, when it says anything.
    std::optional<LeaseRecord> holder(GpuSlot slot) const;

    // Starts waiting, without polling, for the lease of `slot` (see start_lock_waiter).
    void wait_for(GpuSlot slot);
    bool waiting(GpuSlot slot) const { return m_leases.at(slot).waiter > 0; }
    struct WaitEnd {
        GpuSlot slot = 0;
        bool granted = false; // else the lease may be free: try again to know
    };
    // For a reaped child: the end of a waiter, or nothing if `pid` was not one.
    std::optional<WaitEnd> on_child_exit(pid_t pid, int wait_status);
    // Stops every waiter (SIGKILL, reaped here); returns the GPUs they were waiting for.
    GpuSlots cancel_waits();
    // The lowest descriptor a lease is kept at: jobs get theirs at 3, 4, ... and, with the
    // sources above every target, one dup2 can never overwrite another's source.
    int first_private_fd() const { return m_first_private_fd; }

private:
    struct Lease {
        std::string key;
        UniqueFd fd; // open while held, or while a waiter waits on it
        bool locked = false;
        pid_t waiter = -1;
        int inherited = -1; // a descriptor of this lease we were started with, if any
        std::size_t record_size = 0;
    };

    bool lock(Lease& lease);
    void find_inherited();

    LockDirectory m_directory;
    std::string m_user;
    unsigned m_uid = 0;
    std::vector<Lease> m_leases;
    int m_first_private_fd = 0;
};

} // namespace gpusched::sys
