#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/lease_table.hpp>
#include <gpusched/sys/lease_handover.hpp>
#include <gpusched/sys/lock_directory.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <poll.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpusched::sys {

// This process's leases on the GPUs of its pool, one per GPU whatever the number of its
// jobs there. A lease is a listening socket bound to the GPU's abstract name (see
// lease_socket.hpp); each job on the GPU inherits a descriptor of it, so the lease lasts
// while this process or any of those jobs (or anything they started) still holds one. So two
// gpusched processes never share a GPU, one that is killed keeps its GPUs leased exactly as
// long as its jobs run, and nothing in the file system can end or fake a lease. A lease
// passes from one process to another only whole: handed over at a job boundary to a process
// that waits for it (hand_over; see lease_handover.hpp), or let go.
//
// A MIG instance and its GPU exclude each other (see lease_share_name): the lease of a MIG
// instance whose GPU is known is two sockets, its own name and a share of its GPU, and a job
// on it inherits both; the lease of a whole GPU is not taken while a share of it is bound.
//
// A job promised part of a whole GPU's memory takes no lease of it but a memory share
// (lease_memory_share_name; host_leases_memory.cpp): one socket per job, which the job
// inherits, so that jobs of several processes and users share the GPU by memory, each
// process reading what the others promised from the names bound.
class HostLeases final : public LeaseTable {
public:
    // The lock directory's path names the lease space, and the directory keeps the records
    // of who holds what; it need not exist, and what happens to it never changes who holds a
    // GPU. `parents` has, for each key that is a MIG instance, the key of its GPU ("" for a
    // whole GPU, or where the GPU is unknown; missing entries are "").
    HostLeases(std::filesystem::path lock_directory, std::vector<std::string> keys,
               std::vector<std::string> parents = {});
    ~HostLeases() override;
    HostLeases(const HostLeases&) = delete;
    HostLeases& operator=(const HostLeases&) = delete;

    std::size_t size() const { return m_leases.size(); }
    const std::string& key(GpuSlot slot) const { return m_leases.at(slot).key; }

    // Takes the lease of `slot` unless another socket holds it; true when it is ours (now or
    // already). Leases this process inherited (gpusched inside a gpusched job) are ours.
    bool try_take(GpuSlot slot) override;
    bool held(GpuSlot slot) const override { return static_cast<bool>(m_leases.at(slot).socket); }
    // The descriptor of a held lease, for a job to inherit.
    int fd(GpuSlot slot) const;
    // Every descriptor of a held lease (a MIG instance's: its own, then its share of its GPU),
    // appended to `fds`: a job inherits them all.
    void append_fds(GpuSlot slot, std::vector<int>& fds) const override;
    // What a refused lease waits for, when it is not the GPU's own lease: "its GPU GPU-..."
    // (held whole) or "a MIG instance of it"; else "".
    std::string blocked_by(GpuSlot slot) const override;
    // Lets go of our descriptor; jobs that inherited one keep the lease until they end.
    void release(GpuSlot slot) override;

    // Writes who holds a held lease (us, running `jobs`) into its record file, for
    // `gpusched status`. Best effort: a record that cannot be written is only missing.
    void describe(GpuSlot slot, std::vector<LeaseHolder> jobs,
                  std::optional<std::size_t> queued = std::nullopt) override;

    // Memory shares (see LeaseTable and host_leases_memory.cpp).
    ShareAnswer try_share(GpuSlot slot, AllocationId id, std::uint64_t bytes,
                          const FitsBeside& fits, std::vector<int>& fds) override;
    void release_share(GpuSlot slot, AllocationId id) override;
    std::uint64_t promised_elsewhere(GpuSlot slot, const GpuMemoryReading& reading) override;
    // Who holds the lease of `slot`, as far as can be told.
    LeaseOwner holder(GpuSlot slot) const override;

    // Starts waiting, without polling, for the lease of `slot`: a connection to its holder
    // that hangs up when the lease ends (see connect_to_lease).
    void wait_for(GpuSlot slot) override;
    bool waiting(GpuSlot slot) const override;
    // The descriptors the event loop waits on for the waits under way.
    void add_poll_fds(std::vector<pollfd>& fds) const;
    // For a descriptor poll found ready: nothing when it is none of ours, else the GPUs whose
    // leases became ours (none when another process was quicker: we wait again).
    std::optional<GpuSlots> on_ready(const pollfd& ready);
    // Stops every wait; returns the GPUs waited for.
    GpuSlots cancel_waits() override;

    // Fair sharing (see lease_handover.hpp). What our waits tell the holders: our weight
    // (--share), how many GPUs we wait for, and the GPU-seconds our jobs have used, sent again
    // to the holders we wait for whenever it is noted.
    void set_share(double weight) { m_weight = weight; }
    void set_wanted(std::size_t gpus) override { m_wanted = gpus; }
    void note_usage(double used) override;
    // At a job boundary on `slot` (none of our jobs left on it): hands the lease to the
    // waiter that began to wait first among those owed the GPU by the fair-share rule, given
    // the GPU-seconds we have used. Who got it; nothing when no one waits or is owed it.
    // `waited_before`: only to a waiter that began to wait before then.
    std::optional<LeaseTaker> hand_over(GpuSlot slot, double used,
                                        double waited_before = k_no_time_limit) override;
    // When the waits under way began (0 when none is).
    double wait_since() const { return m_wait_since; }
    // A wait for memory room on GPUs whose leases are free (`gpusched exec --mem`, while too
    // few GPUs have the memory) is said under the same wait name as a lease's, so that
    // `gpusched status` lists the waiter; until said false. The wait's start is kept across
    // the lease waits that follow it.
    void set_waiting_for_room(bool waiting);
    // For a process that holds some leases while it waits for more (`gpusched exec -n 2`):
    // what tells it that someone began to wait for one of them, or said more.
    void add_holder_poll_fds(std::vector<pollfd>& fds) const;
    // The lowest descriptor a lease is kept at: jobs get theirs at 3, 4, ... and, with the
    // sources above every target, one dup2 can never overwrite another's source.
    int first_private_fd() const { return m_first_private_fd; }

private:
    // What a lease that could not be taken is waiting for.
    enum class Blocker { own_name, whole_parent, mig_instance, memory_share };

    // One of our jobs' memory shares of a GPU: the socket, and its name.
    struct MemoryShare {
        UniqueFd socket;
        std::string name;
    };

    // A process waiting for a lease we hold: its connection, accepted, and what it said.
    struct Waiter {
        UniqueFd connection;
        std::string unread; // the start of a line not yet complete
        std::optional<WaiterLine> line;
        bool gone = false;
    };

    struct Lease {
        std::string key;
        std::string name;    // its abstract socket name
        std::string parent_key;    // a MIG instance's GPU, where known
        std::string parent_name;   // that GPU's lease name
        std::string share_name;    // a MIG instance's share of its GPU
        std::string shares_prefix; // a whole GPU's: where the shares of its MIG instances start
        std::string memory_prefix; // a whole GPU's: where its memory shares start
        std::string admission;     // a whole GPU's: bound while a memory share is admitted
        std::optional<std::string> whole_wait_name; // bound while we wait for it whole
        UniqueFd whole_wait;
        std::map<AllocationId, MemoryShare> memory_shares; // our jobs'
        std::vector<std::string> inherited_shares;         // memory shares we were started inside
        std::vector<std::pair<int, std::uint64_t>> processes; // the last look's, by pid
        UniqueFd share;            // the share, while held
        int share_inherited = -1;
        std::string blocker; // the name a wait connects to
        Blocker blocked = Blocker::own_name;
        UniqueFd socket;     // the lease, while held
        int inherited = -1;  // a descriptor of this lease we were started with, if any
        UniqueFd connection; // to the holder, while waiting
        std::vector<Waiter> waiters; // while held: those accepted at a job boundary
        bool retry = false;  // waiting, but could not connect: look again when m_retry fires
        double taken_at = 0; // when it became ours
        UniqueFd record;     // its record file, while held and written
        std::size_t record_size = 0;
        bool record_warned = false;
    };

    bool take(Lease& lease);
    bool adopt(Lease& lease, std::vector<UniqueFd> sockets);
    void accept_waiters(Lease& lease);
    void tell_holder(const Lease& lease) const;
    bool any_waiting() const;
    void update_wait_name();
    bool bind_names(Lease& lease);
    bool blocked_by_shares(Lease& lease) const;
    void note_whole_wait(Lease& lease) const;
    bool others_wait_whole(const Lease& lease, const std::vector<std::string>& names) const;
    bool own_share(const Lease& lease, const std::string& name) const;
    std::uint64_t promised_by_others(const Lease& lease,
                                     const std::vector<std::string>& names) const;
    void start_wait(Lease& lease);
    void take_or_wait(GpuSlot slot, GpuSlots& granted);
    void arm_retry();
    void find_inherited();
    const LockDirectory* records();

    std::filesystem::path m_lock_directory;
    std::string m_space;
    std::optional<LockDirectory> m_records;
    bool m_records_warned = false;
    std::string m_user;
    unsigned m_uid = 0;
    std::vector<Lease> m_leases;
    UniqueFd m_retry; // a timerfd, armed while some wait has no connection
    bool m_retry_armed = false;
    unsigned m_retry_turns = 0;
    int m_first_private_fd = 0;
    double m_weight = 1;
    std::size_t m_wanted = 1;
    double m_used = 0;
    double m_wait_since = 0; // when the waits under way began
    bool m_waiting_for_room = false; // see set_waiting_for_room
    UniqueFd m_wait_name;    // bound while we wait (lease_wait_name)
};

} // namespace gpusched::sys
