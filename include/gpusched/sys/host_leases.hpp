#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/sys/lock_directory.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <poll.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// This process's leases on the GPUs of its pool, one per GPU whatever the number of its
// jobs there. A lease is a listening socket bound to the GPU's abstract name (see
// lease_socket.hpp); each job on the GPU inherits a descriptor of it, so the lease lasts
// while this process or any of those jobs (or anything they started) still holds one. So two
// gpusched processes never share a GPU, one that is killed keeps its GPUs leased exactly as
// long as its jobs run, and nothing in the file system can end or fake a lease.
class HostLeases {
public:
    // The lock directory's path names the lease space, and the directory keeps the records
    // of who holds what; it need not exist, and what happens to it never changes who holds a
    // GPU.
    HostLeases(std::filesystem::path lock_directory, std::vector<std::string> keys);
    ~HostLeases();
    HostLeases(const HostLeases&) = delete;
    HostLeases& operator=(const HostLeases&) = delete;

    std::size_t size() const { return m_leases.size(); }
    const std::string& key(GpuSlot slot) const { return m_leases.at(slot).key; }

    // Takes the lease of `slot` unless another socket holds it; true when it is ours (now or
    // already). Leases this process inherited (gpusched inside a gpusched job) are ours.
    bool try_take(GpuSlot slot);
    bool held(GpuSlot slot) const { return static_cast<bool>(m_leases.at(slot).socket); }
    // The descriptor of a held lease, for a job to inherit.
    int fd(GpuSlot slot) const;
    // Lets go of our descriptor; jobs that inherited one keep the lease until they end.
    void release(GpuSlot slot);

    // Writes who holds a held lease (us, running `jobs`) into its record file, for
    // `gpusched status`. Best effort: a record that cannot be written is only missing.
    void describe(GpuSlot slot, std::vector<LeaseHolder> jobs);
    // Who holds the lease of `slot`, as far as can be told.
    LeaseOwner holder(GpuSlot slot) const;

    // Starts waiting, without polling, for the lease of `slot`: a connection to its holder
    // that hangs up when the lease ends (see connect_to_lease).
    void wait_for(GpuSlot slot);
    bool waiting(GpuSlot slot) const;
    // The descriptors the event loop waits on for the waits under way.
    void add_poll_fds(std::vector<pollfd>& fds) const;
    // For a descriptor poll found ready: nothing when it is none of ours, else the GPUs whose
    // leases became ours (none when another process was quicker: we wait again).
    std::optional<GpuSlots> on_ready(const pollfd& ready);
    // Stops every wait; returns the GPUs waited for.
    GpuSlots cancel_waits();
    // The lowest descriptor a lease is kept at: jobs get theirs at 3, 4, ... and, with the
    // sources above every target, one dup2 can never overwrite another's source.
    int first_private_fd() const { return m_first_private_fd; }

private:
    struct Lease {
        std::string key;
        std::string name;    // its abstract socket name
        UniqueFd socket;     // the lease, while held
        int inherited = -1;  // a descriptor of this lease we were started with, if any
        UniqueFd connection; // to the holder, while waiting
        bool retry = false;  // waiting, but could not connect: look again when m_retry fires
        UniqueFd record;     // its record file, while held and written
        std::size_t record_size = 0;
        bool record_warned = false;
    };

    bool take(Lease& lease);
    void start_wait(Lease& lease);
    void take_or_wait(GpuSlot slot, GpuSlots& granted);
    void arm_retry();
    void find_inherited();
    const LockDirectory* records();

    std::filesystem::path m_lock_directory;
    std::optional<LockDirectory> m_records;
    bool m_records_warned = false;
    std::string m_user;
    unsigned m_uid = 0;
    std::vector<Lease> m_leases;
    UniqueFd m_retry; // a timerfd, armed while some wait has no connection
    bool m_retry_armed = false;
    unsigned m_retry_turns = 0;
    int m_first_private_fd = 0;
};

} // namespace gpusched::sys
