#pragma once

#include <gpusched/gpu_memory.hpp>
#include <gpusched/gpu_pool.hpp>
#include <gpusched/gpu_samples.hpp>
#include <gpusched/job_request.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/lease_table.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpusched {

// A GPU's lease handed over at a job boundary, for the log.
struct HandedOver {
    GpuSlot gpu = 0;
    LeaseTaker taker;
};

// A wait for a GPU's lease that has just begun, for the log: what the wait is for when it is
// not the GPU's own lease (its GPU, for a MIG instance), and who holds it.
struct LeaseWaitBegun {
    GpuSlot gpu = 0;
    std::string blocker;
    LeaseOwner holder;
};

// What became of a placed job's leases.
struct LeaseAnswer {
    // The GPUs whose lease another process holds: the job cannot start now, and they are
    // waited for. Empty: every lease is ours and its descriptors were appended.
    GpuSlots refused;
    // The GPUs where the job's memory does not fit beside what other processes promised
    // their jobs there (their memory shares): nothing is waited for; each GPU takes a job
    // again once a look at its memory finds room.
    GpuSlots no_room;
    std::vector<HandedOver> handed_over;
    std::vector<LeaseWaitBegun> waits_begun;
    bool taken() const { return refused.empty() && no_room.empty(); }
};

// What a job asks of the pool: distinct GPUs, and the memory it needs on each (nothing: each
// GPU whole, or its slot of --jobs-per-gpu where the user gave it).
struct GpuNeed {
    std::size_t gpus = 1;
    std::optional<std::uint64_t> memory{};
};

// GPUs placed for one job until released: its memory is promised to it there.
struct Allocation {
    AllocationId id = 0;
    GpuSlots gpus;
    std::optional<std::uint64_t> memory{};
};

// What a GPU holds, as far as this run can tell: for the log, the status, the tests.
struct GpuHolding {
    unsigned jobs = 0;   // our jobs on it (and ended ones whose leftovers still run there)
    unsigned room = 0;   // how many more it takes now (0 while it takes none)
    bool usable = true;  // not busy with someone else's work (--skip-busy)
    bool paused = false; // by its queue (`gpusched pause --gpu`)
    bool leased = false; // its host-wide lease is ours
    bool leased_elsewhere = false;       // another process holds its lease: we wait
    std::optional<LeaseTaker> handed_to; // handed over at a job boundary, until ours again
    // Its memory, once a look has read it: its total, what is in use by anyone, what our
    // jobs were promised, and what a new job can be promised now.
    std::optional<std::uint64_t> memory_total{};
    std::uint64_t memory_used = 0;
    std::uint64_t memory_reserved = 0;
    std::optional<std::uint64_t> memory_available{};
};

// Where a job runs: the one collaborator that owns the choice of GPUs. It holds the pool
// (jobs per GPU, each GPU's load), each GPU's memory and what is promised of it (a
// GpuMemoryLedger: a job that asks for memory goes where that much is left, beside others),
// what keeps a GPU from taking a job (busy with someone
// else's work, paused, leased by another process), the host-wide leases through a
// LeaseTable, their hand-over at job boundaries and the fair-share numbers it hands over by
// (the GPU-seconds our jobs used), and the busy-GPU samples through GpuSamples. It answers
// where a request can start now (GPUs, or nothing and what it waits for), whether it can
// ever start here, and what a GPU holds.
//
// It makes no system call and reads no clock: time is passed in, and the leases and samples
// are interfaces, so every rule is tested in-process (tests/unit/placement_test.cpp). The
// Scheduler holds it and asks it where each job goes; the runner tells it what the system
// said (a lease became ours, a job started or ended) through sys::PlacementFeed.
class Placement {
public:
    using Clock = std::chrono::steady_clock;
    // Our jobs on a GPU, for its lease's record.
    using HoldersOf = std::function<std::vector<LeaseHolder>(GpuSlot)>;

    explicit Placement(GpuPool pool);

    // Whether the user gave the pool's jobs per GPU (--jobs-per-gpu). Given, it caps every
    // GPU's jobs, and a job that asks for no memory shares its GPU by that count. Not given
    // (one job per GPU), jobs that ask for memory share a GPU while they fit, however many,
    // and one that asks for none has its GPU to itself.
    void set_jobs_per_gpu_given(bool given) { m_jobs_per_gpu_given = given; }

    // The leases (none with --no-lock) and the samples (none without --skip-busy). Not
    // owned: each outlives its use here, or is unset (nullptr) first.
    void use_leases(LeaseTable* leases) { m_leases = leases; }
    void use_samples(GpuSamples* samples) { m_samples = samples; }
    bool leases_used() const { return m_leases != nullptr; }

    const GpuPool& pool() const { return m_pool; }

    // Where a job can start now: GPUs that are its (one more job on each, its memory promised
    // there) until release(); nothing while fewer GPUs have room. A job asking for memory
    // waits for the first look at the GPUs' memory; one asking for more than a GPU has
    // takes a GPU alone. GPUs in `avoid` (where the job just failed) are passed over if
    // others will do.
    std::optional<Allocation> acquire(const GpuNeed& need, const GpuSlots& avoid = {});
    void release(const Allocation& allocation);
    bool can_take(const GpuNeed& need) const;
    // How many jobs of this need could start now, one after another.
    std::size_t room_for(const GpuNeed& need) const;
    // Some GPU has memory left that a job asking for memory could have now: a queue worker
    // whose own jobs ask for none still takes the queued jobs that ask for memory.
    bool has_memory_room() const;
    // Whether it could ever start here, however long it waited (can_ever_run over the pool).
    bool can_ever_start(const JobRequest& request, const RunnerDefaults& defaults) const
    {
        return can_ever_run(request, m_pool.size(), defaults);
    }
    // What the run waits for while a GPU it wants is another process's ("waiting for GPU 2,
    // held by alice's run 4711 since 10:02"), for the status line; "" when nothing.
    const std::string& waiting_for() const { return m_waiting_for; }
    GpuHolding holding(GpuSlot slot) const;

    // What keeps a GPU from taking a new job; each holds until set back.
    void set_usable(GpuSlot slot, bool usable) { m_pool.set_usable(slot, usable); }
    void set_paused(GpuSlot slot, bool paused) { m_pool.set_paused(slot, paused); }
    void set_leased_elsewhere(GpuSlot slot, bool leased)
    {
        m_pool.set_leased_elsewhere(slot, leased);
    }

    // The leases of a job placed on `gpus` (its allocation `id`), taken before it starts:
    // first, at a job boundary (ours the GPU's only job), the GPU goes to a process that waits
    // for it and is owed it by the fair-share rule; then each lease is taken, or waited for,
    // its GPU taking no job until on_lease_granted. Where the job was promised part of the
    // GPU's memory, it takes a memory share instead, beside other processes' jobs, when its
    // memory still fits beside what they promised (LeaseTable::try_share). No leases: all
    // taken. The job's GPUs stay acquired: the caller releases them
    // (Scheduler::on_lease_refused) when the job cannot start.
    LeaseAnswer take_leases(const GpuSlots& gpus, AllocationId id, Clock::time_point now,
                            std::vector<int>& fds);
    // A lease waited for is ours now: its GPU takes jobs again.
    void on_lease_granted(GpuSlot slot);
    // Who runs on these GPUs changed: their lease records are written again at the next tend.
    void holders_changed(const GpuSlots& slots);
    // Before each wait of the loop: a GPU none of our jobs uses any more is let go (to the
    // first who waits, whatever its share), records follow the jobs, and when `wants_gpus`
    // is false nobody waits for GPUs that would get no job. Returns the GPUs whose waits were
    // given up: they may be tried again (Scheduler::on_lease_available).
    GpuSlots tend_leases(bool wants_gpus, std::size_t queued, const HoldersOf& holders_of);
    // The end of the run: every wait is given up.
    void cancel_lease_waits();

    // How much GPU an allocation holds, for the fair share: each GPU where it holds a memory
    // share (beside other processes' jobs; or anywhere, without leases) counts for the part
    // of the GPU's total it was promised or used, whichever is more, so that a user whose
    // jobs pack one GPU is not charged a GPU for each of them; each other GPU (held whole,
    // a MIG instance, memory unread) counts 1.
    double gpus_held(const GpuSlots& gpus, AllocationId id) const;
    // The fair share's numbers: a job's shell started holding `gpus` (gpus_held); an attempt
    // ended, its shell having run since `started` (`launched` false: it never started)
    // holding `started_holding` until now, and counted for `held` over its whole time (what
    // it used may have raised it).
    void on_job_started(double gpus, Clock::time_point started);
    void on_attempt_ended(double started_holding, double held, Clock::time_point started,
                          Clock::time_point now, bool launched);
    // GPU-seconds our jobs have used, the running ones up to `now`.
    double gpu_seconds_used(Clock::time_point now) const;

    // What the samples found since last asked: GPUs that became busy with someone else's
    // work or free again, to be set (set_usable) one by one. When `wants_gpus` is false no
    // GPU would get a job, and the look under way is stopped, unless a job that asked for
    // memory runs (its peak is watched to its end). The memory the samples read
    // goes to the ledger, our jobs' processes told by `owner_of`.
    std::vector<std::pair<GpuSlot, bool>>
    take_sample_changes(bool wants_gpus, const GpuSamples::OwnerOf& owner_of = {});
    // Only what the samples read of memory (and whether that reading is out of date), for the
    // placements that follow; no change of a GPU's use is taken.
    void take_memory_look(const GpuSamples::OwnerOf& owner_of);
    // A look at the GPUs' memory is wanted: a job that asks for memory runs or waits.
    bool memory_wanted(bool memory_jobs_wait) const;
    const GpuMemoryLedger& memory() const { return m_memory; }

private:
    void hand_over_at_boundary(const GpuSlots& gpus, Clock::time_point now, LeaseAnswer& answer);
    // Whether `slot` has room now for a job that needs `memory` there.
    bool memory_fits(GpuSlot slot, std::uint64_t memory) const;
    unsigned memory_jobs_cap() const;

    GpuPool m_pool;
    GpuMemoryLedger m_memory;
    bool m_jobs_per_gpu_given = true;
    // Per GPU: its memory cannot be read (no NVML, or NVML does not know it): a job that asks
    // for memory has it to itself.
    std::vector<bool> m_memory_unreadable;
    std::size_t m_memory_holds = 0; // allocations that asked for memory, not yet released
    bool m_memory_stale = false;    // the last reading is out of date: nothing more is promised
    AllocationId m_next_allocation = 1;
    LeaseTable* m_leases = nullptr;
    GpuSamples* m_samples = nullptr;
    std::string m_waiting_for;
    std::map<GpuSlot, LeaseTaker> m_handed_to; // GPUs handed over, until they are ours again
    std::vector<bool> m_record_stale;          // per GPU: its lease record is behind
    // The memory shares our allocations took (rather than a GPU's lease), until released.
    std::set<std::pair<AllocationId, GpuSlot>> m_shares_taken;
    // GPU-seconds of ended attempts; and of the running shells, as the GPUs they hold and the
    // sum of what each one holds times its start (seconds of the clock), so that what they
    // used so far is one product away whatever their number.
    double m_ended_seconds = 0;
    double m_running_gpus = 0;
    double m_running_starts = 0;
};

} // namespace gpusched
