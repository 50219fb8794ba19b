#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/gpu_samples.hpp>
#include <gpusched/job_request.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/lease_table.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
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
    std::vector<HandedOver> handed_over;
    std::vector<LeaseWaitBegun> waits_begun;
    bool taken() const { return refused.empty(); }
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
};

// Where a job runs: the one collaborator that owns the choice of GPUs. It holds the pool
// (jobs per GPU, each GPU's load), what keeps a GPU from taking a job (busy with someone
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

    // The leases (none with --no-lock) and the samples (none without --skip-busy). Not
    // owned: each outlives its use here, or is unset (nullptr) first.
    void use_leases(LeaseTable* leases) { m_leases = leases; }
    void use_samples(GpuSamples* samples) { m_samples = samples; }
    bool leases_used() const { return m_leases != nullptr; }

    const GpuPool& pool() const { return m_pool; }

    // Where a request for `gpus` distinct GPUs can start now: they are its (one more job on
    // each) until release(); nothing while fewer GPUs have room. GPUs in `avoid` (where the
    // job just failed) are passed over if others will do.
    std::optional<GpuSlots> acquire(std::size_t gpus, const GpuSlots& avoid = {})
    {
        return m_pool.acquire(gpus, avoid);
    }
    void release(const GpuSlots& slots) { m_pool.release(slots); }
    bool can_take(std::size_t gpus) const { return m_pool.can_take(gpus); }
    std::size_t room_for(std::size_t gpus_per_job) const { return m_pool.room_for(gpus_per_job); }
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

    // The leases of a job placed on `gpus`, taken before it starts: first, at a job boundary
    // (ours the GPU's only job), the GPU goes to a process that waits for it and is owed it
    // by the fair-share rule; then each lease is taken, or waited for, its GPU taking no job
    // until on_lease_granted. No leases: all taken. The job's GPUs stay acquired: the caller
    // releases them (Scheduler::on_lease_refused) when the job cannot start.
    LeaseAnswer take_leases(const GpuSlots& gpus, Clock::time_point now, std::vector<int>& fds);
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

    // The fair share's numbers: a job's shell started on `gpus` GPUs; an attempt ended, its
    // shell having run since `started` (`launched` false: it never started).
    void on_job_started(std::size_t gpus, Clock::time_point started);
    void on_attempt_ended(std::size_t gpus, Clock::time_point started, Clock::time_point now,
                          bool launched);
    // GPU-seconds our jobs have used, the running ones up to `now`.
    double gpu_seconds_used(Clock::time_point now) const;

    // What the samples found since last asked: GPUs that became busy with someone else's
    // work or free again, to be set (set_usable) one by one. When `wants_gpus` is false no
    // GPU would get a job, and the look under way is stopped.
    std::vector<std::pair<GpuSlot, bool>> take_sample_changes(bool wants_gpus);

private:
    void hand_over_at_boundary(const GpuSlots& gpus, Clock::time_point now, LeaseAnswer& answer);

    GpuPool m_pool;
    LeaseTable* m_leases = nullptr;
    GpuSamples* m_samples = nullptr;
    std::string m_waiting_for;
    std::map<GpuSlot, LeaseTaker> m_handed_to; // GPUs handed over, until they are ours again
    std::vector<bool> m_record_stale;          // per GPU: its lease record is behind
    // GPU-seconds of ended attempts; and of the running shells, as their GPU count and the
    // sum of each one's GPU count times its start (seconds of the clock), so that what they
    // used so far is one product away whatever their number.
    double m_ended_seconds = 0;
    std::size_t m_running_gpus = 0;
    double m_running_starts = 0;
};

} // namespace gpusched
