// Where a job runs, as the Placement decides it: jobs per GPU, a GPU busy with someone else's
// work, a paused GPU, a lease another process holds (waited for, then ours), the hand-over at
// a job boundary to a waiter the fair share owes the GPU, a request for more GPUs than the
// pool has, and what a GPU holds. The leases, the GPU samples and the time are fakes: an hour
// of sharing passes in a millisecond.
#include <gpusched/placement.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>

namespace gpusched {
namespace {

using namespace std::chrono_literals;
using Clock = Placement::Clock;

// The host's leases, as the test writes them: which GPUs another process holds, and one
// process that waits for ours and is owed one once we have used `owed_after` GPU-seconds.
class FakeLeases final : public LeaseTable {
public:
    bool try_take(GpuSlot slot) override
    {
        if (others.contains(slot)) {
            return false;
        }
        ours.insert(slot);
        return true;
    }
    bool held(GpuSlot slot) const override { return ours.contains(slot); }
    void append_fds(GpuSlot slot, std::vector<int>& fds) const override
    {
        fds.push_back(100 + static_cast<int>(slot));
    }
    void release(GpuSlot slot) override { ours.erase(slot); }
    void wait_for(GpuSlot slot) override { waits.insert(slot); }
    bool waiting(GpuSlot slot) const override { return waits.contains(slot); }
    GpuSlots cancel_waits() override
    {
        GpuSlots waited(waits.begin(), waits.end());
        waits.clear();
        return waited;
    }
    std::string blocked_by(GpuSlot /*slot*/) const override { return ""; }
    LeaseOwner holder(GpuSlot slot) const override
    {
        const auto found = others.find(slot);
        return found == others.end() ? LeaseOwner{} : LeaseOwner{found->second, {}, {}};
    }
    void set_wanted(std::size_t /*gpus*/) override {}
    void note_usage(double used) override { noted = used; }
    std::optional<LeaseTaker> hand_over(GpuSlot slot, double used,
                                        double /*waited_before*/) override
    {
        offered.push_back(used);
        if (!waiter || used < owed_after) {
            return std::nullopt;
        }
        const auto taker = *std::exchange(waiter, std::nullopt);
        ours.erase(slot);
        others[slot] = taker;
        return taker;
    }
    void describe(GpuSlot slot, std::vector<LeaseHolder> jobs,
                  std::optional<std::size_t> queued) override
    {
        described.emplace_back(slot, jobs.size(), queued.value_or(0));
    }
    // Memory shares: `promised_by_others` is what the other processes promised on each GPU;
    // a GPU in `others` is held whole elsewhere.
    ShareAnswer try_share(GpuSlot slot, AllocationId id, std::uint64_t bytes,
                          const FitsBeside& fits, std::vector<int>& fds) override
    {
        if (ours.contains(slot)) {
            return {Share::whole};
        }
        const auto promised = others.contains(slot) ? k_everything : promised_by_others[slot];
        if (!fits(promised) || others.contains(slot)) {
            return {Share::no_room, promised};
        }
        shares[{slot, id}] = bytes;
        fds.push_back(200 + static_cast<int>(slot));
        return {Share::shared, promised};
    }
    void release_share(GpuSlot slot, AllocationId id) override { shares.erase({slot, id}); }
    std::uint64_t promised_elsewhere(GpuSlot slot, const GpuMemoryReading& /*reading*/) override
    {
        return others.contains(slot) ? k_everything : promised_by_others[slot];
    }

    static constexpr std::uint64_t k_everything = std::numeric_limits<std::uint64_t>::max();
    std::map<GpuSlot, std::uint64_t> promised_by_others;
    std::map<std::pair<GpuSlot, AllocationId>, std::uint64_t> shares;

    // The other process that holds `slot` lets go: the wait ends, the lease is ours.
    void let_go(GpuSlot slot)
    {
        others.erase(slot);
        waits.erase(slot);
    }

    std::map<GpuSlot, LeaseTaker> others;
    std::set<GpuSlot> ours;
    std::set<GpuSlot> waits;
    std::optional<LeaseTaker> waiter;
    double owed_after = 0;
    std::vector<double> offered; // the GPU-seconds we had used, at each hand-over asked
    double noted = 0;
    std::vector<std::tuple<GpuSlot, std::size_t, std::size_t>> described;
};

// What the test says a look at the GPUs found, and what the look was told of our jobs.
class FakeSamples final : public GpuSamples {
public:
    std::vector<std::pair<GpuSlot, bool>>
    take_changes(const std::function<bool(GpuSlot)>& runs_our_jobs) override
    {
        ours_on_0 = runs_our_jobs(0);
        return std::exchange(changes, {});
    }
    void stop() override { ++stops; }
    std::optional<MemoryLook> take_memory(const OwnerOf& /*owner_of*/) override
    {
        return std::exchange(memory, std::nullopt);
    }

    std::vector<std::pair<GpuSlot, bool>> changes;
    std::optional<MemoryLook> memory;
    bool ours_on_0 = false;
    int stops = 0;
};

const Clock::time_point k_placement_start{};

Clock::time_point since_start(std::chrono::milliseconds offset)
{
    return k_placement_start + offset;
}

const LeaseTaker k_bob{4321, 1001, "bob"};
const LeaseTaker k_alice{4711, 1002, "alice"};

// The GPUs a placement gave, none when it gave nothing.
GpuSlots slots_of(const std::optional<Allocation>& allocation)
{
    return allocation ? allocation->gpus : GpuSlots{};
}

// What the samples found, set one change at a time, as the scheduler does.
void take_samples(Placement& placement, bool wants_gpus = true)
{
    for (const auto& [slot, usable] : placement.take_sample_changes(wants_gpus)) {
        placement.set_usable(slot, usable);
    }
}

TEST(Placement, EachGpuTakesUpToItsJobsPerGpuAndTheLeastLoadedFirst)
{
    Placement placement(GpuPool({"0", "1"}, 2));
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{0}));
    const auto on_1 = placement.acquire({});
    EXPECT_EQ(slots_of(on_1), (GpuSlots{1}));
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{0}));
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{1}));
    EXPECT_FALSE(placement.acquire({}));
    EXPECT_EQ(placement.holding(0).jobs, 2u);
    EXPECT_EQ(placement.holding(0).room, 0u);
    placement.release(*on_1);
    EXPECT_EQ(placement.holding(1).room, 1u);
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{1}));
}

TEST(Placement, AGpuBusyWithSomeoneElsesWorkGetsNoJobUntilASampleFindsItFree)
{
    FakeSamples samples;
    Placement placement(GpuPool({"0", "1"}));
    placement.use_samples(&samples);
    samples.changes = {{0, false}};
    take_samples(placement);
    EXPECT_FALSE(placement.holding(0).usable);
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{1}));
    EXPECT_FALSE(placement.acquire({}));
    samples.changes = {{0, true}};
    take_samples(placement);
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{0}));
    take_samples(placement);
    EXPECT_TRUE(samples.ours_on_0) << "a sample is judged knowing which GPUs run our jobs";
}

TEST(Placement, NoSampleIsTakenWhileNoGpuWouldGetAJob)
{
    FakeSamples samples;
    Placement placement(GpuPool({"0"}));
    placement.use_samples(&samples);
    take_samples(placement, false);
    EXPECT_EQ(samples.stops, 1);
}

TEST(Placement, APausedGpuGetsNoNewJobWhileItsJobsGoOn)
{
    Placement placement(GpuPool({"0", "1"}));
    const auto on_0 = placement.acquire({});
    EXPECT_EQ(slots_of(on_0), (GpuSlots{0}));
    placement.set_paused(0, true);
    EXPECT_EQ(placement.holding(0).jobs, 1u);
    EXPECT_TRUE(placement.holding(0).paused);
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{1}));
    placement.release(*on_0);
    EXPECT_FALSE(placement.acquire({}));
    placement.set_paused(0, false);
    EXPECT_EQ(slots_of(placement.acquire({})), (GpuSlots{0}));
}

TEST(Placement, ALeaseHeldElsewhereIsWaitedForAndItsGpuTakesJobsOnceItIsOurs)
{
    FakeLeases leases;
    leases.others[0] = k_bob;
    Placement placement(GpuPool({"0", "1"}));
    placement.use_leases(&leases);
    const auto placed = placement.acquire({});
    ASSERT_EQ(slots_of(placed), (GpuSlots{0}));
    std::vector<int> fds;
    const auto answer = placement.take_leases(placed->gpus, placed->id, since_start(0ms), fds);
    EXPECT_EQ(answer.refused, (GpuSlots{0}));
    EXPECT_TRUE(fds.empty());
    ASSERT_EQ(answer.waits_begun.size(), 1u);
    EXPECT_EQ(answer.waits_begun[0].holder.taker->user, "bob");
    EXPECT_TRUE(leases.waiting(0));
    EXPECT_EQ(placement.waiting_for(), "waiting for GPU 0, held by bob's process 4321");
    EXPECT_TRUE(placement.holding(0).leased_elsewhere);
    placement.release(*placed); // the job goes back to its queue

    const auto meanwhile = placement.acquire({});
    EXPECT_EQ(slots_of(meanwhile), (GpuSlots{1})) << "the other GPU takes the job meanwhile";
    placement.release(*meanwhile);

    leases.let_go(0);
    placement.on_lease_granted(0);
    EXPECT_EQ(placement.waiting_for(), "");
    EXPECT_FALSE(placement.holding(0).leased_elsewhere);
    const auto again = placement.acquire({});
    ASSERT_EQ(slots_of(again), (GpuSlots{0}));
    EXPECT_TRUE(placement.take_leases(again->gpus, again->id, since_start(5ms), fds).taken());
    EXPECT_EQ(fds, (std::vector<int>{100}));
    EXPECT_TRUE(placement.holding(0).leased);
}

TEST(Placement, AtAJobBoundaryTheGpuGoesToAWaiterTheFairShareOwesIt)
{
    FakeLeases leases;
    leases.waiter = k_alice;
    leases.owed_after = 30; // alice is owed a GPU once we have used 30 GPU-seconds
    Placement placement(GpuPool({"0"}));
    placement.use_leases(&leases);
    std::vector<int> fds;
    auto placed = *placement.acquire({});
    ASSERT_TRUE(placement.take_leases(placed.gpus, placed.id, since_start(0ms), fds).taken());
    EXPECT_EQ(leases.offered, (std::vector<double>{})) << "not ours before: no boundary";
    placement.on_job_started(1, since_start(0ms));
    EXPECT_DOUBLE_EQ(placement.gpu_seconds_used(since_start(20'000ms)), 20);

    // 20 s in: the job ends and the next follows it, before alice is owed the GPU.
    placement.on_attempt_ended(1, 1, since_start(0ms), since_start(20'000ms), true);
    EXPECT_DOUBLE_EQ(leases.noted, 20) << "the waiters we wait for hear what we used";
    placement.release(placed);
    placed = *placement.acquire({});
    ASSERT_TRUE(placement.take_leases(placed.gpus, placed.id, since_start(20'000ms), fds).taken());
    placement.on_job_started(1, since_start(20'000ms));

    // 40 s in: now she is; the job waits for the GPU like anyone's.
    placement.on_attempt_ended(1, 1, since_start(20'000ms), since_start(40'000ms), true);
    placement.release(placed);
    placed = *placement.acquire({});
    const auto answer = placement.take_leases(placed.gpus, placed.id, since_start(40'000ms), fds);
    EXPECT_EQ(leases.offered, (std::vector<double>{20, 40}));
    ASSERT_EQ(answer.handed_over.size(), 1u);
    EXPECT_EQ(answer.handed_over[0].taker.user, "alice");
    EXPECT_EQ(answer.refused, (GpuSlots{0}));
    EXPECT_EQ(placement.holding(0).handed_to->user, "alice");
    EXPECT_EQ(placement.waiting_for(), "waiting for GPU 0, held by alice's process 4711");
}

TEST(Placement, TheFairShareCountsRunningJobsByTheirGpusAndTime)
{
    Placement placement(GpuPool({"0", "1", "2"}));
    placement.on_job_started(2, since_start(0ms));
    placement.on_job_started(1, since_start(10'000ms));
    EXPECT_DOUBLE_EQ(placement.gpu_seconds_used(since_start(30'000ms)), 2 * 30 + 20);
    placement.on_attempt_ended(2, 2, since_start(0ms), since_start(30'000ms), true);
    EXPECT_DOUBLE_EQ(placement.gpu_seconds_used(since_start(40'000ms)), 60 + 30);
    placement.on_attempt_ended(1, 1, since_start(40'000ms), since_start(40'500ms),
                               false); // never started
    EXPECT_DOUBLE_EQ(placement.gpu_seconds_used(since_start(40'500ms)), 60 + 0.5 + 30.5);
}

TEST(Placement, AGpuNoJobOfOursUsesIsLetGoAndTheRecordsFollowTheJobs)
{
    FakeLeases leases;
    Placement placement(GpuPool({"0", "1"}));
    placement.use_leases(&leases);
    std::vector<int> fds;
    const auto first = *placement.acquire({});
    const auto second = *placement.acquire({});
    ASSERT_TRUE(placement.take_leases(first.gpus, first.id, since_start(0ms), fds).taken());
    ASSERT_TRUE(placement.take_leases(second.gpus, second.id, since_start(0ms), fds).taken());
    placement.holders_changed(first.gpus);
    placement.holders_changed(second.gpus);
    const auto one_job = [](GpuSlot) { return std::vector<LeaseHolder>{LeaseHolder{7, 0, "x"}}; };
    placement.tend_leases(true, 5, one_job);
    EXPECT_EQ(leases.described.size(), 2u);
    EXPECT_EQ(leases.described[0], std::make_tuple(GpuSlot{0}, std::size_t{1}, std::size_t{5}));

    placement.release(second);
    placement.tend_leases(true, 5, one_job);
    EXPECT_TRUE(leases.held(0));
    EXPECT_FALSE(leases.held(1)) << "no job of ours follows on GPU 1";
    EXPECT_EQ(leases.described.size(), 2u) << "a record is written only when it changed";
}

TEST(Placement, WhenNoGpuIsWantedAnyMoreNobodyWaitsForOne)
{
    FakeLeases leases;
    leases.others[0] = k_bob;
    Placement placement(GpuPool({"0"}));
    placement.use_leases(&leases);
    std::vector<int> fds;
    const auto placed = *placement.acquire({});
    EXPECT_FALSE(placement.take_leases(placed.gpus, placed.id, since_start(0ms), fds).taken());
    placement.release(placed);
    const auto given_up = placement.tend_leases(false, 0, {});
    EXPECT_EQ(given_up, (GpuSlots{0}));
    EXPECT_FALSE(leases.waiting(0));
    EXPECT_FALSE(placement.holding(0).leased_elsewhere);
}

TEST(Placement, ARequestForMoreGpusThanThePoolHasCanNeverStartHere)
{
    Placement placement(GpuPool({"0", "1"}));
    EXPECT_TRUE(placement.can_ever_start(JobRequest{2, {}, {}}, {}));
    EXPECT_FALSE(placement.can_ever_start(JobRequest{3, {}, {}}, {}));
    EXPECT_FALSE(placement.can_ever_start(JobRequest{}, {3})) << "the runner's own default";
    EXPECT_FALSE(placement.acquire({.gpus = 3}));
}

TEST(Placement, WhatAGpuHoldsWithoutLeases)
{
    Placement placement(GpuPool({"0"}, 3));
    ASSERT_TRUE(placement.acquire({}));
    const auto holding = placement.holding(0);
    EXPECT_EQ(holding.jobs, 1u);
    EXPECT_EQ(holding.room, 2u);
    EXPECT_TRUE(holding.usable);
    EXPECT_FALSE(holding.leased);
    EXPECT_FALSE(holding.handed_to);
    std::vector<int> fds;
    EXPECT_TRUE(placement.take_leases({0}, 0, since_start(0ms), fds).taken()) << "--no-lock";
    EXPECT_TRUE(fds.empty());
}

namespace memory {

constexpr std::uint64_t k_gib = std::uint64_t{1} << 30;

// A look that read every GPU of the pool at `total` GiB with `used` GiB in use, of which
// `ours` by our jobs' allocations; all of it by processes, but `driver` GiB.
GpuSamples::MemoryLook look(std::size_t gpus, std::uint64_t total, std::uint64_t used,
                            std::map<AllocationId, std::uint64_t> ours = {},
                            std::uint64_t driver = 0)
{
    GpuSamples::MemoryLook look;
    for (auto& [id, bytes] : ours) {
        bytes *= k_gib;
    }
    for (std::size_t i = 0; i < gpus; ++i) {
        look.gpus.emplace_back(
            GpuMemoryReading{total * k_gib, used * k_gib, ours, (used - driver) * k_gib, true});
    }
    return look;
}

struct MemoryPlacement {
    explicit MemoryPlacement(std::vector<std::string> ids, unsigned jobs_per_gpu = 1,
                             bool given = false)
        : placement(GpuPool(std::move(ids), jobs_per_gpu))
    {
        placement.set_jobs_per_gpu_given(given);
        placement.use_samples(&samples);
    }
    void read(GpuSamples::MemoryLook look)
    {
        samples.memory = std::move(look);
        take_samples(placement);
    }
    std::optional<Allocation> place(std::uint64_t gib)
    {
        return placement.acquire({.gpus = 1, .memory = gib * k_gib});
    }

    FakeSamples samples;
    Placement placement;
};

TEST(PlacementMemory, JobsShareAGpuWhileTheirNeedsFitAndNeverMoreIsPromised)
{
    MemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    const auto first = gpus.place(30);
    const auto second = gpus.place(30);
    ASSERT_TRUE(first && second);
    EXPECT_FALSE(gpus.place(30)) << "60 of 80 GiB promised";
    EXPECT_TRUE(gpus.place(20)) << "exactly what is left";
    EXPECT_EQ(gpus.placement.holding(0).memory_reserved, 80 * k_gib);
    EXPECT_EQ(gpus.placement.holding(0).memory_available, 0u);
    EXPECT_EQ(gpus.placement.holding(0).jobs, 3u) << "not capped at one job per GPU";
    gpus.placement.release(*first);
    EXPECT_TRUE(gpus.place(30)) << "its memory is free again";
}

TEST(PlacementMemory, BeforeTheFirstLookNoJobThatAsksForMemoryStarts)
{
    MemoryPlacement gpus({"0"});
    EXPECT_FALSE(gpus.place(1));
    EXPECT_FALSE(gpus.placement.can_take({.gpus = 1, .memory = k_gib}));
    EXPECT_TRUE(gpus.placement.acquire({})) << "a job that asks for none starts as before";
}

TEST(PlacementMemory, TwoJobsPlacedBeforeEitherAllocatesNeverCountOnTheSameMemory)
{
    MemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    const auto first = gpus.place(50);
    ASSERT_TRUE(first);
    // The next look still sees nothing in use: the first has not allocated yet.
    gpus.read(look(1, 80, 0));
    EXPECT_FALSE(gpus.place(50)) << "it counts at its reservation until it uses more";
}

TEST(PlacementMemory, AJobThatUsesMoreThanItAskedCountsAtWhatItUses)
{
    MemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    const auto first = gpus.place(10);
    ASSERT_TRUE(first);
    gpus.read(look(1, 80, 60, {{first->id, 60}}));
    EXPECT_FALSE(gpus.place(30)) << "20 GiB left, not 70";
    EXPECT_TRUE(gpus.place(20));
}

TEST(PlacementMemory, WhatOthersUseAndTheDriverKeepsIsNotPromised)
{
    MemoryPlacement gpus({"0"});
    // 80 GiB, 50 of them used by another user's process and the driver: 30 left.
    gpus.read(look(1, 80, 50));
    EXPECT_FALSE(gpus.place(31));
    const auto placed = gpus.place(30);
    ASSERT_TRUE(placed);
    // The other process grows after our job started: nothing more fits, ours goes on.
    gpus.read(look(1, 80, 75, {{placed->id, 5}}));
    EXPECT_FALSE(gpus.place(1));
    EXPECT_EQ(gpus.placement.holding(0).memory_used, 75 * k_gib);
}

TEST(PlacementMemory, ANeedBeyondWhatTheDriverLeavesRunsAloneRatherThanWaitForever)
{
    MemoryPlacement gpus({"0"});
    // 80 GiB, 2 kept by the driver (in use by no process): 78 is the most a job can have.
    gpus.read(look(1, 80, 2, {}, 2));
    EXPECT_EQ(gpus.placement.memory().usable(0), 78 * k_gib);
    const auto big = gpus.place(79);
    ASSERT_TRUE(big) << "it would wait for memory that never frees";
    EXPECT_FALSE(gpus.place(1)) << "it has the GPU to itself";
    gpus.placement.release(*big);
    ASSERT_TRUE(gpus.place(78));
    EXPECT_FALSE(gpus.place(1)) << "78 is all there is";
}

TEST(PlacementMemory, NoJobStartsOnAReadingThatIsOutOfDate)
{
    MemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    ASSERT_TRUE(gpus.place(10));
    GpuSamples::MemoryLook stale;
    stale.stale = true;
    gpus.read(stale);
    EXPECT_FALSE(gpus.place(10)) << "a look is overdue";
    EXPECT_FALSE(gpus.placement.has_memory_room());
    gpus.read(look(1, 80, 0));
    EXPECT_TRUE(gpus.place(10));
}

TEST(PlacementMemory, AJobThatAsksForNoMemoryHasItsGpuToItselfUnlessJobsPerGpuIsGiven)
{
    MemoryPlacement whole({"0"});
    whole.read(look(1, 80, 0));
    const auto plain = whole.placement.acquire({});
    ASSERT_TRUE(plain);
    EXPECT_FALSE(whole.place(1)) << "beside a job that did not say what it needs";
    whole.placement.release(*plain);
    ASSERT_TRUE(whole.place(10));
    EXPECT_FALSE(whole.placement.acquire({})) << "nor does it join one that did";

    MemoryPlacement slots({"0"}, 2, true);
    slots.read(look(1, 80, 0));
    ASSERT_TRUE(slots.placement.acquire({}));
    EXPECT_TRUE(slots.place(10)) << "--jobs-per-gpu 2: it shares by slots";
    EXPECT_FALSE(slots.place(10)) << "and --jobs-per-gpu caps jobs that ask for memory";
}

TEST(PlacementMemory, AJobAskingMoreThanAGpuHasRunsAloneAndOneWhoseGpuCannotBeReadToo)
{
    MemoryPlacement gpus({"0", "1"});
    GpuSamples::MemoryLook partly = look(2, 80, 0);
    partly.gpus[1].reset(); // NVML does not know GPU 1
    gpus.read(partly);
    const auto huge = gpus.place(100);
    ASSERT_TRUE(huge);
    EXPECT_EQ(huge->gpus, (GpuSlots{0}));
    const auto unread = gpus.place(1);
    ASSERT_TRUE(unread) << "GPU 1, unread, takes one job";
    EXPECT_EQ(unread->gpus, (GpuSlots{1}));
    EXPECT_FALSE(gpus.place(1)) << "each has its GPU to itself";
}

TEST(PlacementMemory, TheFairShareCountsAJobAtTheShareOfTheGpuItWasPromised)
{
    MemoryPlacement gpus({"0", "1"});
    GpuSamples::MemoryLook partly = look(2, 80, 0);
    partly.gpus[1].reset(); // NVML does not know GPU 1
    gpus.read(partly);
    const auto quarter = gpus.place(20);
    ASSERT_TRUE(quarter);
    ASSERT_EQ(quarter->gpus, (GpuSlots{0}));
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(quarter->gpus, quarter->id), 0.25);
    const auto unread = gpus.place(20);
    ASSERT_TRUE(unread);
    ASSERT_EQ(unread->gpus, (GpuSlots{1}));
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(unread->gpus, unread->id), 1)
        << "GPU 1, unread, is its whole";
    gpus.placement.release(*unread);
    const auto whole = gpus.placement.acquire({});
    ASSERT_TRUE(whole);
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(whole->gpus, whole->id), 1);

    // It used 40 GiB of its 20: it counts for half the GPU from then.
    auto used = look(2, 80, 40, {{quarter->id, 40}});
    used.gpus[1].reset();
    gpus.read(used);
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(quarter->gpus, quarter->id), 0.5);

    gpus.placement.on_job_started(0.25, since_start(0ms));
    gpus.placement.on_job_started(1, since_start(0ms));
    EXPECT_DOUBLE_EQ(gpus.placement.gpu_seconds_used(since_start(40'000ms)), 10 + 40);
    // Ended having used half the GPU: its whole time counts at half.
    gpus.placement.on_attempt_ended(0.25, 0.5, since_start(0ms), since_start(40'000ms), true);
    EXPECT_DOUBLE_EQ(gpus.placement.gpu_seconds_used(since_start(80'000ms)), 20 + 80);
}

TEST(PlacementMemory, RoomIsCountedInJobsOfTheNeedAskedAbout)
{
    MemoryPlacement gpus({"0", "1"});
    gpus.read(look(2, 80, 0));
    EXPECT_EQ(gpus.placement.room_for({.gpus = 1, .memory = 30 * k_gib}), 4u);
    EXPECT_EQ(gpus.placement.room_for({.gpus = 2, .memory = 30 * k_gib}), 2u);
    ASSERT_TRUE(gpus.place(60));
    EXPECT_EQ(gpus.placement.room_for({.gpus = 1, .memory = 30 * k_gib}), 2u);
}

// Other processes' memory shares of the GPU: what they promised beyond their jobs' use is
// not promised again here, a job that asks for memory takes a share rather than the lease,
// and one that no longer fits when its share is admitted waits for a look that finds room.
struct SharedMemoryPlacement : MemoryPlacement {
    explicit SharedMemoryPlacement(std::vector<std::string> ids) : MemoryPlacement(std::move(ids))
    {
        placement.use_leases(&leases);
    }
    // Places and takes the leases of a job that asks for `gib`: its allocation once started.
    std::optional<Allocation> start(std::uint64_t gib, LeaseAnswer* answer = nullptr)
    {
        auto placed = place(gib);
        if (!placed) {
            return std::nullopt;
        }
        std::vector<int> fds;
        const auto taken = placement.take_leases(placed->gpus, placed->id, since_start(0ms), fds);
        if (answer != nullptr) {
            *answer = taken;
        }
        if (!taken.taken()) {
            placement.release(*placed);
            return std::nullopt;
        }
        return placed;
    }

    FakeLeases leases;
};

TEST(PlacementMemory, WhatOtherProcessesPromisedIsNotPromisedAgain)
{
    SharedMemoryPlacement gpus({"0"});
    gpus.leases.promised_by_others[0] = 50 * k_gib;
    gpus.read(look(1, 80, 0));
    EXPECT_FALSE(gpus.place(31)) << "30 of 80 GiB left beside the other process's promise";
    const auto started = gpus.start(30);
    ASSERT_TRUE(started);
    EXPECT_TRUE(gpus.leases.shares.contains({0, started->id})) << "a share, not the lease";
    EXPECT_FALSE(gpus.leases.held(0));
    gpus.placement.release(*started);
    EXPECT_TRUE(gpus.leases.shares.empty()) << "its share goes with it";
}

TEST(PlacementMemory, AJobThatNoLongerFitsWhenItsShareIsAdmittedWaitsForTheNextLook)
{
    SharedMemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    // Between the look and the admission another process promised 60 GiB.
    gpus.leases.promised_by_others[0] = 60 * k_gib;
    LeaseAnswer answer;
    EXPECT_FALSE(gpus.start(30, &answer));
    EXPECT_EQ(answer.no_room, (GpuSlots{0}));
    EXPECT_TRUE(answer.refused.empty()) << "no lease is waited for";
    EXPECT_FALSE(gpus.place(30)) << "the promise seen counts until the next look";
    const auto beside = gpus.place(20);
    ASSERT_TRUE(beside) << "what is left beside the promise";
    gpus.placement.release(*beside);
    gpus.leases.promised_by_others[0] = 0; // its job ended
    gpus.read(look(1, 80, 0));
    EXPECT_TRUE(gpus.start(70));
}

TEST(PlacementMemory, AGpuHeldWholeByAnotherProcessTakesNoJobThatAsksForMemory)
{
    SharedMemoryPlacement gpus({"0"});
    gpus.leases.others[0] = k_bob;
    gpus.read(look(1, 80, 0));
    EXPECT_FALSE(gpus.place(1));
    gpus.leases.let_go(0);
    gpus.read(look(1, 80, 0));
    EXPECT_TRUE(gpus.start(1));
}

TEST(PlacementMemory, AJobOnAGpuWeHoldWholeTakesTheLeaseAsBefore)
{
    SharedMemoryPlacement gpus({"0"});
    gpus.read(look(1, 80, 0));
    gpus.leases.ours.insert(0);
    const auto started = gpus.start(10);
    ASSERT_TRUE(started);
    EXPECT_TRUE(gpus.leases.shares.empty());
}

TEST(PlacementMemory, AJobWithAGpuToItselfCountsTheWholeGpuWhateverItAsked)
{
    SharedMemoryPlacement gpus({"0", "1"});
    gpus.read(look(2, 80, 0));
    gpus.leases.ours.insert(1); // held whole already (a MIG instance, or a job without --mem)
    const auto beside = gpus.start(20);
    ASSERT_TRUE(beside);
    ASSERT_EQ(beside->gpus, (GpuSlots{0}));
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(beside->gpus, beside->id), 0.25)
        << "a memory share beside other processes' jobs";
    const auto alone = gpus.start(20);
    ASSERT_TRUE(alone);
    ASSERT_EQ(alone->gpus, (GpuSlots{1}));
    EXPECT_DOUBLE_EQ(gpus.placement.gpus_held(alone->gpus, alone->id), 1)
        << "under the GPU's lease: nobody else's job runs there";
}

} // namespace memory

} // namespace
} // namespace gpusched
