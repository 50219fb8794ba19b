#include <gpusched/scheduler.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <memory>

namespace gpusched {
namespace {

template <class T>
std::vector<T> actions_of(const std::vector<Action>& actions)
{
    std::vector<T> result;
    for (const auto& action : actions) {
        if (const auto* wanted = std::get_if<T>(&action)) {
            result.push_back(*wanted);
        }
    }
    return result;
}

std::vector<StartJob> starts(const std::vector<Action>& actions)
{
    return actions_of<StartJob>(actions);
}

std::vector<JobId> started_ids(const std::vector<Action>& actions)
{
    std::vector<JobId> ids;
    for (const auto& start : starts(actions)) {
        ids.push_back(start.command.id);
    }
    return ids;
}

std::vector<int> signals_sent(const std::vector<Action>& actions)
{
    std::vector<int> result;
    for (const auto& signal : actions_of<SignalRunningJobs>(actions)) {
        result.push_back(signal.signal);
    }
    return result;
}

bool arms_timer(const std::vector<Action>& actions)
{
    return !actions_of<ArmKillTimer>(actions).empty();
}

Command command(JobId id)
{
    return Command{id, "job " + std::to_string(id), 1, {}, false, {}};
}

SchedulerOptions ahead(std::size_t read_ahead)
{
    SchedulerOptions options;
    options.read_ahead = read_ahead;
    return options;
}

constexpr JobOutcome k_success{0, 0};
constexpr JobOutcome k_exit_one{1, 0};

TEST(Scheduler, StartsAJobAsSoonAsAGpuIsFree)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(8));
    auto first = starts(scheduler.on_command(command(1)));
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].command.id, 1u);
    EXPECT_EQ(first[0].gpus.front(), GpuSlot{0});
    auto second = starts(scheduler.on_command(command(2)));
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].gpus.front(), GpuSlot{1});
    EXPECT_TRUE(starts(scheduler.on_command(command(3))).empty());
    EXPECT_EQ(scheduler.queued_count(), 1u);

    auto next = starts(scheduler.on_job_exit(1, k_success));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 3u);
    EXPECT_EQ(next[0].gpus.front(), GpuSlot{0});
}

TEST(Scheduler, HandsFreedGpusOutInTheOrderTheyWereFreed)
{
    Scheduler scheduler(GpuPool({"0", "1", "2"}), ahead(8));
    for (JobId id = 1; id <= 3; ++id) {
        scheduler.on_command(command(id));
    }
    scheduler.on_job_exit(3, k_success); // frees GPU 2
    scheduler.on_job_exit(1, k_success); // frees GPU 0
    EXPECT_EQ(starts(scheduler.on_command(command(4)))[0].gpus.front(), GpuSlot{2});
    EXPECT_EQ(starts(scheduler.on_command(command(5)))[0].gpus.front(), GpuSlot{0});
}

TEST(Scheduler, ReadAheadIsBounded)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(2));
    EXPECT_TRUE(scheduler.wants_input());
    scheduler.on_command(command(1)); // runs
    scheduler.on_command(command(2)); // queued
    EXPECT_TRUE(scheduler.wants_input());
    scheduler.on_command(command(3)); // queued
    EXPECT_FALSE(scheduler.wants_input());
    scheduler.on_job_exit(1, k_success);
    EXPECT_TRUE(scheduler.wants_input());
}

TEST(Scheduler, DoneWhenInputEndedAndEveryJobEnded)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_input_end();
    EXPECT_FALSE(scheduler.wants_input());
    EXPECT_FALSE(scheduler.done());
    scheduler.on_job_exit(1, k_success);
    EXPECT_FALSE(scheduler.done());
    scheduler.on_job_exit(2, k_exit_one);
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.counts().succeeded, 1u);
    EXPECT_EQ(scheduler.counts().failed, 1u);
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, EmptyInputIsDoneAtOnce)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_input_end();
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 0);
}

TEST(Scheduler, SpawnFailureReturnsTheGpuAndCountsAFailure)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    auto next = starts(scheduler.on_spawn_failure(1));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 2u);
    EXPECT_EQ(next[0].gpus.front(), GpuSlot{0});
    EXPECT_EQ(scheduler.counts().failed, 1u);
}

TEST(Scheduler, RejectedCommandsCountAsFailed)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_rejected_command();
    scheduler.on_input_end();
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, ExitStatusCountsFailuresUpToOneHundred)
{
    for (const auto& [failures, status] :
         std::vector<std::pair<int, int>>{{0, 0}, {3, 3}, {100, 100}, {101, 101}, {150, 101}}) {
        Scheduler scheduler(GpuPool({"0"}), ahead(4));
        for (int i = 0; i < failures; ++i) {
            scheduler.on_rejected_command();
        }
        scheduler.on_input_end();
        EXPECT_EQ(scheduler.exit_status(), status) << failures << " failures";
    }
}

TEST(Scheduler, FirstStopSignalIsPassedOnThenSecondKills)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_command(command(3));

    auto first = scheduler.on_signal(SIGTERM);
    EXPECT_EQ(signals_sent(first), std::vector<int>{SIGTERM});
    EXPECT_TRUE(arms_timer(first));
    EXPECT_FALSE(scheduler.wants_input());

    EXPECT_EQ(signals_sent(scheduler.on_signal(SIGINT)), std::vector<int>{SIGKILL});

    // Job 3 never starts, even though a GPU frees up.
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, JobOutcome{0, SIGTERM})).empty());
    EXPECT_FALSE(scheduler.done());
    scheduler.on_job_exit(2, JobOutcome{0, SIGKILL});
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGTERM);
    const auto unstarted = scheduler.take_unstarted();
    ASSERT_EQ(unstarted.size(), 1u);
    EXPECT_EQ(unstarted[0].id, 3u);
}

TEST(Scheduler, AJobOutOfGpuMemoryBesideOthersRunsAgainAloneUncountedButAloneItFails)
{
    // --jobs-per-gpu 2: jobs 1 and 2 share GPU 0; job 3 waits.
    Placement placement(GpuPool({"0"}, 2));
    Scheduler scheduler(std::move(placement), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_command(command(3));
    scheduler.on_input_end();
    JobOutcome out_of_memory{1, 0};
    out_of_memory.out_of_gpu_memory = true;
    auto actions = scheduler.on_job_exit(1, out_of_memory);
    ASSERT_FALSE(actions.empty());
    const auto* rerun = std::get_if<RetryScheduled>(&actions.front());
    ASSERT_NE(rerun, nullptr);
    EXPECT_TRUE(rerun->out_of_memory);
    EXPECT_TRUE(rerun->alone) << "neither its need nor its use was known";
    EXPECT_EQ(rerun->attempt, 2u);
    EXPECT_TRUE(starts(actions).empty()) << "it waits for GPU 0 alone, job 3 behind it";
    EXPECT_EQ(scheduler.counts().memory_reruns, 1u);
    EXPECT_EQ(scheduler.counts().retries, 0u);
    EXPECT_EQ(scheduler.counts().failed, 0u);
    const auto alone = starts(scheduler.on_job_exit(2, k_success));
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_EQ(alone[0].command.id, 1u);
    // Alone on its GPU, running out of memory is its own failure.
    EXPECT_EQ(started_ids(scheduler.on_job_exit(1, out_of_memory)), std::vector<JobId>{3});
    EXPECT_EQ(scheduler.counts().failed, 1u);
    EXPECT_EQ(scheduler.counts().memory_reruns, 1u);
    scheduler.on_job_exit(3, k_success);
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, AJobsLeftoversKeepItsGpuUntilReleased)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_input_end();
    // Job 1's shell ended, but a background process of it still holds GPU 0.
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, JobOutcome{0, 0}, true)).empty());
    EXPECT_EQ(scheduler.counts().succeeded, 1u);
    EXPECT_EQ(scheduler.lingering_count(), 1u);
    EXPECT_FALSE(scheduler.done());
    EXPECT_EQ(started_ids(scheduler.on_job_released(1, 1)), std::vector<JobId>{2});
    scheduler.on_job_exit(2, JobOutcome{0, 0});
    EXPECT_TRUE(scheduler.done());
}

TEST(Scheduler, EachAttemptKeepsItsOwnGpusWhileItsLeftoversRun)
{
    auto options = ahead(4);
    options.retries = 1;
    Scheduler scheduler(GpuPool({"0", "1"}), options);
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_input_end();
    // Attempt 1 fails on GPU 0 and leaves a process; attempt 2 goes to GPU 1 once job 2 ends.
    scheduler.on_job_exit(1, k_exit_one, true);
    const auto retry = starts(scheduler.on_job_exit(2, k_success));
    ASSERT_EQ(retry.size(), 1u);
    EXPECT_EQ(retry[0].gpus, GpuSlots{1});
    scheduler.on_job_exit(1, k_exit_one, true);
    EXPECT_EQ(scheduler.lingering_count(), 2u);
    scheduler.on_job_released(1, 2);
    EXPECT_EQ(scheduler.pool().load(0), 1u) << "attempt 1's leftovers still hold GPU 0";
    EXPECT_EQ(scheduler.pool().load(1), 0u);
    scheduler.on_job_released(1, 1);
    EXPECT_TRUE(scheduler.done());
}

TEST(Scheduler, AStopReachesLingeringJobs)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_input_end();
    scheduler.on_job_exit(1, JobOutcome{0, 0}, true);
    EXPECT_EQ(signals_sent(scheduler.on_signal(SIGTERM)), std::vector<int>{SIGTERM});
    EXPECT_FALSE(scheduler.done());
    scheduler.on_job_released(1, 1);
    EXPECT_TRUE(scheduler.done());
    // It ended by itself before the stop: it counts as succeeded, not interrupted.
    EXPECT_EQ(scheduler.counts().succeeded, 1u);
    EXPECT_EQ(scheduler.counts().interrupted, 0u);
}

TEST(Scheduler, ADeferredStartUsesNoAttemptAndKeepsTheOrder)
{
    auto options = ahead(8);
    options.retries = 0;
    Scheduler scheduler(GpuPool({"0", "1", "2"}), options);
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_command(command(3));
    scheduler.on_command(command(4));
    // The system refuses jobs 2 and 3 (a fork limit); nothing starts until the retry.
    scheduler.on_spawn_deferred(2);
    scheduler.on_spawn_deferred(3);
    EXPECT_TRUE(scheduler.spawn_deferred());
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, JobOutcome{0, 0})).empty());
    const auto started = scheduler.on_spawn_retry();
    EXPECT_EQ(started_ids(started), (std::vector<JobId>{2, 3, 4}));
    for (const auto& action : started) {
        EXPECT_EQ(std::get<StartJob>(action).command.attempt, 1u);
    }
    EXPECT_EQ(scheduler.counts().failed, 0u);
}

TEST(Scheduler, StopWithNothingRunningIsDoneAtOnce)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    auto actions = scheduler.on_signal(SIGHUP);
    EXPECT_TRUE(actions.empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGHUP);
}

Command replayable(JobId id)
{
    auto from_file = command(id);
    from_file.replayable = true;
    return from_file;
}

TEST(Scheduler, DrainLetsRunningJobsFinishAndStartsNoMore)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(replayable(1));
    scheduler.on_command(replayable(2));
    EXPECT_TRUE(scheduler.on_signal(SIGUSR1).empty());
    EXPECT_TRUE(scheduler.on_command(replayable(3)).empty());
    scheduler.on_input_end();
    EXPECT_FALSE(scheduler.wants_input());
    EXPECT_FALSE(scheduler.done());
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, k_success)).empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 0);
    const auto unstarted = scheduler.take_unstarted();
    ASSERT_EQ(unstarted.size(), 2u);
    EXPECT_EQ(unstarted[0].id, 2u);
    EXPECT_EQ(unstarted[1].id, 3u);
}

TEST(Scheduler, DrainRunsWhatCannotBeReadAgainThenEndsWithTheInput)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(2));
    scheduler.on_command(command(1));
    scheduler.on_command(replayable(2));
    scheduler.on_command(command(3));
    EXPECT_FALSE(scheduler.wants_input());
    EXPECT_TRUE(starts(scheduler.on_signal(SIGUSR1)).empty());
    EXPECT_TRUE(scheduler.wants_input()) << "what was already written is still taken";
    scheduler.on_command(command(4));
    EXPECT_FALSE(scheduler.wants_input()) << "read-ahead still bounds it";
    auto next = starts(scheduler.on_job_exit(1, k_exit_one));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 3u);
    EXPECT_TRUE(scheduler.wants_input());
    scheduler.on_command(command(5));
    scheduler.on_input_end();
    EXPECT_EQ(starts(scheduler.on_job_exit(3, k_success))[0].command.id, 4u);
    EXPECT_EQ(starts(scheduler.on_job_exit(4, k_success))[0].command.id, 5u);
    EXPECT_FALSE(scheduler.done());
    EXPECT_TRUE(starts(scheduler.on_job_exit(5, k_success)).empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 1) << "a drain ends with the jobs' status";
    const auto unstarted = scheduler.take_unstarted();
    ASSERT_EQ(unstarted.size(), 1u);
    EXPECT_EQ(unstarted[0].id, 2u);
}

TEST(Scheduler, HaltDuringADrainStartsNothingMore)
{
    auto options = ahead(4);
    options.halt = HaltPolicy::parse("soon,fail=1").value();
    Scheduler scheduler(GpuPool({"0"}), options);
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_signal(SIGUSR1);
    auto actions = scheduler.on_job_exit(1, k_exit_one);
    EXPECT_EQ(actions_of<HaltStarted>(actions).size(), 1u);
    EXPECT_TRUE(starts(actions).empty());
    EXPECT_FALSE(scheduler.wants_input());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.take_unstarted().size(), 1u);
}

TEST(Scheduler, StopAfterDrainStillStops)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    scheduler.on_command(command(1));
    scheduler.on_signal(SIGUSR1);
    EXPECT_EQ(signals_sent(scheduler.on_signal(SIGTERM)), std::vector<int>{SIGTERM});
    scheduler.on_job_exit(1, JobOutcome{0, SIGTERM});
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGTERM);
}

SchedulerOptions with_retries(unsigned retries)
{
    auto options = ahead(8);
    options.retries = retries;
    return options;
}

SchedulerOptions with_halt(const char* policy)
{
    auto options = ahead(8);
    options.halt = HaltPolicy::parse(policy).value();
    return options;
}

TEST(Scheduler, FailedJobIsRetriedFirstAndOnAnotherGpu)
{
    Scheduler scheduler(GpuPool({"0", "1"}), with_retries(2));
    scheduler.on_command(command(1)); // GPU 0
    scheduler.on_command(command(2)); // GPU 1
    scheduler.on_command(command(3)); // queued
    scheduler.on_job_exit(2, k_success);
    // Job 3 took GPU 1; job 1 fails on GPU 0 and comes back before anything else.
    auto actions = scheduler.on_job_exit(1, k_exit_one);
    const auto retries = actions_of<RetryScheduled>(actions);
    ASSERT_EQ(retries.size(), 1u);
    EXPECT_EQ(retries[0].attempt, 2u);
    auto started = starts(actions);
    ASSERT_EQ(started.size(), 1u) << "the only free GPU is the one it failed on: it is used";
    EXPECT_EQ(started[0].command.id, 1u);
    EXPECT_EQ(started[0].command.attempt, 2u);

    scheduler.on_command(command(4));                  // queued behind nothing: all busy
    scheduler.on_job_exit(3, k_success);               // frees GPU 1; job 4 takes it
    auto third = scheduler.on_job_exit(1, k_exit_one); // fails on GPU 0 again
    scheduler.on_job_exit(4, k_success);
    (void)third;
    EXPECT_EQ(scheduler.counts().retries, 2u);
    EXPECT_EQ(scheduler.counts().failed, 0u) << "not final yet";
}

TEST(Scheduler, RetryAvoidsTheGpuItFailedOnWhenAnotherIsFree)
{
    Scheduler scheduler(GpuPool({"0", "1", "2"}), with_retries(1));
    scheduler.on_command(command(1)); // GPU 0
    auto started = starts(scheduler.on_job_exit(1, k_exit_one));
    ASSERT_EQ(started.size(), 1u);
    EXPECT_NE(started[0].gpus.front(), GpuSlot{0});
}

TEST(Scheduler, RetriesRunOutThenTheJobFails)
{
    Scheduler scheduler(GpuPool({"0"}), with_retries(1));
    scheduler.on_command(command(1));
    scheduler.on_input_end();
    EXPECT_EQ(starts(scheduler.on_job_exit(1, k_exit_one)).size(), 1u);
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, k_exit_one)).empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.counts().failed, 1u);
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, SpawnFailuresAreRetriedToo)
{
    Scheduler scheduler(GpuPool({"0"}), with_retries(1));
    scheduler.on_command(command(1));
    EXPECT_EQ(starts(scheduler.on_spawn_failure(1)).size(), 1u);
}

TEST(Scheduler, HaltSoonStopsStartingJobs)
{
    Scheduler scheduler(GpuPool({"0", "1"}), with_halt("soon,fail=1"));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_command(command(3));
    auto actions = scheduler.on_job_exit(1, k_exit_one);
    ASSERT_EQ(actions_of<HaltStarted>(actions).size(), 1u);
    EXPECT_TRUE(starts(actions).empty());
    EXPECT_TRUE(signals_sent(actions).empty()) << "soon lets running jobs finish";
    scheduler.on_job_exit(2, k_success);
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 1);
    EXPECT_EQ(scheduler.take_unstarted().size(), 1u);
}

TEST(Scheduler, HaltNowStopsRunningJobsAndCountsThemAsInterrupted)
{
    Scheduler scheduler(GpuPool({"0", "1", "2"}), with_halt("now,fail=1"));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_command(command(3));
    auto actions = scheduler.on_job_exit(1, k_exit_one);
    EXPECT_EQ(signals_sent(actions), std::vector<int>{SIGTERM});
    EXPECT_TRUE(arms_timer(actions));
    scheduler.on_job_exit(2, JobOutcome{0, SIGTERM});
    scheduler.on_job_exit(3, k_success);
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.counts().failed, 1u);
    EXPECT_EQ(scheduler.counts().interrupted, 2u) << "whatever they returned once stopped";
    EXPECT_EQ(scheduler.counts().succeeded, 0u);
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, HaltOnSuccess)
{
    Scheduler scheduler(GpuPool({"0", "1"}), with_halt("now,success=1"));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    auto actions = scheduler.on_job_exit(2, k_success);
    EXPECT_EQ(signals_sent(actions), std::vector<int>{SIGTERM});
    scheduler.on_job_exit(1, JobOutcome{0, SIGTERM});
    EXPECT_EQ(scheduler.exit_status(), 0);
}

TEST(Scheduler, SeveralJobsPerGpu)
{
    Scheduler scheduler(GpuPool({"0", "1"}, 2), ahead(8));
    std::vector<GpuSlot> placed;
    for (JobId id = 1; id <= 5; ++id) {
        for (const auto& start : starts(scheduler.on_command(command(id)))) {
            placed.push_back(start.gpus.front());
        }
    }
    EXPECT_EQ(placed, (std::vector<GpuSlot>{0, 1, 0, 1})) << "job 5 waits: both GPUs are full";
    EXPECT_EQ(starts(scheduler.on_job_exit(2, k_success))[0].gpus, GpuSlots{1});
}

TEST(Scheduler, SeveralGpusPerJobStartInInputOrder)
{
    auto options = ahead(8);
    options.gpus_per_job = 2;
    Scheduler scheduler(GpuPool({"0", "1", "2"}), options);
    EXPECT_EQ(starts(scheduler.on_command(command(1)))[0].gpus, (GpuSlots{0, 1}));
    EXPECT_TRUE(starts(scheduler.on_command(command(2))).empty()) << "one GPU is not enough";
    EXPECT_TRUE(starts(scheduler.on_command(command(3))).empty());
    const auto next = starts(scheduler.on_job_exit(1, k_success));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 2u);
    EXPECT_EQ(next[0].gpus, (GpuSlots{2, 0}));
}

// A queued job's own options, over the worker's.
Command asking(JobId id, JobRequest options)
{
    auto asked = command(id);
    auto context = std::make_shared<JobContext>();
    context->request = options;
    asked.context = std::move(context);
    return asked;
}

TEST(Scheduler, AJobsOwnGpuCountWaitsAtTheHeadForThatMany)
{
    auto options = ahead(8);
    options.only_when_free = true;
    Scheduler scheduler(GpuPool({"0", "1", "2"}), options);
    EXPECT_EQ(starts(scheduler.on_command(command(1)))[0].gpus, (GpuSlots{0}));
    EXPECT_TRUE(starts(scheduler.on_command(asking(2, {.gpus = 3}))).empty())
        << "two free GPUs are not enough";
    EXPECT_FALSE(scheduler.wants_input()) << "nothing overtakes it";
    const auto next = starts(scheduler.on_job_exit(1, k_success));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].gpus.size(), 3u);
}

TEST(Scheduler, AJobAskingForMoreGpusThanThePoolHasGoesBack)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(8));
    const auto actions = scheduler.on_command(asking(1, {.gpus = 3}));
    ASSERT_EQ(actions_of<ReturnCommand>(actions).size(), 1u);
    EXPECT_EQ(scheduler.queued_count(), 0u);
    EXPECT_EQ(scheduler.running_count(), 0u);
}

TEST(Scheduler, AJobsOwnRetriesReplaceTheOptions)
{
    Scheduler scheduler(GpuPool({"0"}), with_retries(5));
    scheduler.on_command(asking(1, {.retries = 1}));
    scheduler.on_command(asking(2, {.retries = 0}));
    scheduler.on_input_end();
    EXPECT_EQ(started_ids(scheduler.on_job_exit(1, k_exit_one)), std::vector<JobId>{1});
    EXPECT_EQ(started_ids(scheduler.on_job_exit(1, k_exit_one)), std::vector<JobId>{2});
    EXPECT_TRUE(started_ids(scheduler.on_job_exit(2, k_exit_one)).empty()) << "no retry for 2";
    EXPECT_EQ(scheduler.counts().failed, 2u);
    EXPECT_EQ(scheduler.counts().retries, 1u);
}

TEST(Scheduler, MoreGpusPerJobThanThePoolIsRefused)
{
    auto options = ahead(8);
    options.gpus_per_job = 3;
    EXPECT_THROW(Scheduler(GpuPool({"0", "1"}), options), std::invalid_argument);
}

TEST(Scheduler, BusyGpuGetsNoJobUntilUsableAgain)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(8));
    EXPECT_TRUE(starts(scheduler.on_gpu_usable(0, false)).empty());
    EXPECT_EQ(starts(scheduler.on_command(command(1)))[0].gpus, GpuSlots{1});
    EXPECT_TRUE(starts(scheduler.on_command(command(2))).empty());
    const auto next = starts(scheduler.on_gpu_usable(0, true));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 2u);
    EXPECT_EQ(next[0].gpus, GpuSlots{0});
}

TEST(Scheduler, APausedGpuGetsNoNewJobButKeepsItsRunningOne)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(8));
    EXPECT_EQ(starts(scheduler.on_command(command(1)))[0].gpus, GpuSlots{0});
    EXPECT_TRUE(starts(scheduler.on_gpu_paused(0, true)).empty());
    EXPECT_EQ(starts(scheduler.on_command(command(2)))[0].gpus, GpuSlots{1});
    scheduler.on_job_exit(1, k_success); // GPU 0 free, but paused
    EXPECT_TRUE(starts(scheduler.on_command(command(3))).empty());
    const auto resumed = starts(scheduler.on_gpu_paused(0, false));
    ASSERT_EQ(resumed.size(), 1u);
    EXPECT_EQ(resumed[0].command.id, 3u);
    EXPECT_EQ(resumed[0].gpus, GpuSlots{0});
}

TEST(Scheduler, ACancelledJobIsNeverRetried)
{
    Scheduler scheduler(GpuPool({"0"}), with_retries(3));
    scheduler.on_command(command(1));
    scheduler.on_job_cancelled(1);
    const auto actions = scheduler.on_job_exit(1, JobOutcome{0, SIGTERM});
    EXPECT_TRUE(actions_of<RetryScheduled>(actions).empty());
    EXPECT_EQ(scheduler.counts().retries, 0u);
}

// As the queue records it: cancelled, whatever the job returned, and no failure (of the exit
// status, or of --halt).
TEST(Scheduler, ACancelledJobCountsAsCancelledNotFailed)
{
    Scheduler scheduler(GpuPool({"0", "1"}), with_halt("now,fail=1"));
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    scheduler.on_job_cancelled(1);
    scheduler.on_job_cancelled(2);
    EXPECT_TRUE(actions_of<HaltStarted>(scheduler.on_job_exit(1, JobOutcome{0, SIGTERM})).empty());
    scheduler.on_job_exit(2, k_success);
    scheduler.on_input_end();
    EXPECT_EQ(scheduler.counts().cancelled, 2u);
    EXPECT_EQ(scheduler.counts().failed, 0u);
    EXPECT_EQ(scheduler.counts().succeeded, 0u);
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 0);
}

// A stop of the run after the cancel does not make it an interrupted job, which --resume or
// its queue would run again.
TEST(Scheduler, ACancelledJobStaysCancelledWhenTheRunStops)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(8));
    scheduler.on_command(command(1));
    scheduler.on_job_cancelled(1);
    scheduler.on_signal(SIGTERM);
    scheduler.on_job_exit(1, JobOutcome{0, SIGTERM});
    EXPECT_EQ(scheduler.counts().cancelled, 1u);
    EXPECT_EQ(scheduler.counts().interrupted, 0u);
}

TEST(Scheduler, RefusedLeaseMovesTheJobToAnotherGpu)
{
    Scheduler scheduler(GpuPool({"0", "1"}), ahead(8));
    EXPECT_EQ(starts(scheduler.on_command(command(1)))[0].gpus, GpuSlots{0});
    const auto moved = starts(scheduler.on_lease_refused(1, {0}));
    ASSERT_EQ(moved.size(), 1u);
    EXPECT_EQ(moved[0].command.id, 1u);
    EXPECT_EQ(moved[0].command.attempt, 1u) << "a refused lease is not an attempt";
    EXPECT_EQ(moved[0].gpus, GpuSlots{1});
    EXPECT_EQ(scheduler.counts().retries, 0u);
}

TEST(Scheduler, JobWaitsForALeaseAtTheHeadOfTheQueue)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(8));
    scheduler.on_command(command(1));
    EXPECT_TRUE(starts(scheduler.on_lease_refused(1, {0})).empty());
    EXPECT_TRUE(starts(scheduler.on_command(command(2))).empty());
    EXPECT_EQ(scheduler.running_count(), 0u);
    EXPECT_TRUE(scheduler.wants_gpus());
    const auto next = starts(scheduler.on_lease_available(0));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 1u) << "the refused job keeps its place";
}

TEST(Scheduler, AWorkersJobRefusedALeaseGoesBackUnlessAnotherGpuTakesIt)
{
    auto options = ahead(64);
    options.only_when_free = true;
    Scheduler scheduler(GpuPool({"0", "1"}), options);
    auto queued = [](JobId id) {
        auto taken = command(id);
        taken.replayable = true;
        return taken;
    };
    EXPECT_EQ(starts(scheduler.on_command(queued(1)))[0].gpus, GpuSlots{0});
    EXPECT_EQ(starts(scheduler.on_lease_refused(1, {0}))[0].gpus, GpuSlots{1})
        << "another free GPU of ours takes it";
    const auto refused_again = scheduler.on_lease_refused(1, {1});
    EXPECT_TRUE(starts(refused_again).empty());
    const auto returned = actions_of<ReturnCommand>(refused_again);
    ASSERT_EQ(returned.size(), 1u) << "no GPU of ours can take it: back to the queue";
    EXPECT_EQ(returned[0].command.id, 1u);
    EXPECT_EQ(scheduler.running_count(), 0u);
    EXPECT_EQ(scheduler.commands_wanted(), 0u) << "nothing is taken while both are leased elsewhere";
    scheduler.on_lease_available(1);
    EXPECT_EQ(scheduler.commands_wanted(), 1u);
}

TEST(Scheduler, WantsGpusOnlyWhileJobsMayCome)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(8));
    EXPECT_TRUE(scheduler.wants_gpus()) << "input may bring jobs";
    scheduler.on_command(command(1));
    scheduler.on_input_end();
    EXPECT_FALSE(scheduler.wants_gpus()) << "nothing queued, nothing more to come";
    scheduler.on_command(command(2));
    EXPECT_TRUE(scheduler.wants_gpus());
    scheduler.on_signal(SIGTERM);
    EXPECT_FALSE(scheduler.wants_gpus()) << "stopping: nothing starts any more";
}

TEST(Scheduler, OnlyWhenFreeTakesNothingItCannotStart)
{
    auto options = ahead(64);
    options.only_when_free = true;
    options.gpus_per_job = 2;
    Scheduler scheduler(GpuPool({"0", "1", "2"}), options);
    EXPECT_TRUE(scheduler.wants_input());
    scheduler.on_command(command(1));
    EXPECT_FALSE(scheduler.wants_input()) << "one GPU left, and a job needs two";
    scheduler.on_job_exit(1, k_success);
    EXPECT_TRUE(scheduler.wants_input());
}

TEST(Scheduler, CommandsWantedIsWhatItWouldTakeNow)
{
    auto options = ahead(3);
    Scheduler reader(GpuPool({"0"}), options);
    EXPECT_EQ(reader.commands_wanted(), 3u) << "its read-ahead";
    reader.on_command(command(1)); // starts
    reader.on_command(command(2)); // waits
    EXPECT_EQ(reader.commands_wanted(), 2u);

    options.only_when_free = true;
    Scheduler worker(GpuPool({"0", "1", "2"}), options);
    EXPECT_EQ(worker.commands_wanted(), 3u) << "one per free GPU, whatever the read-ahead";
    worker.on_command(command(1));
    worker.on_command(command(2));
    EXPECT_EQ(worker.commands_wanted(), 1u);
    worker.on_command(command(3));
    EXPECT_EQ(worker.commands_wanted(), 0u);
    EXPECT_FALSE(worker.wants_input());
    worker.on_job_exit(2, k_success);
    EXPECT_EQ(worker.commands_wanted(), 1u);
    worker.on_input_end();
    EXPECT_EQ(worker.commands_wanted(), 0u) << "no more input once it ended";
}

TEST(Scheduler, UnknownJobExitIsALogicError)
{
    Scheduler scheduler(GpuPool({"0"}), ahead(4));
    EXPECT_THROW(scheduler.on_job_exit(42, k_success), std::logic_error);
}

} // namespace
} // namespace gpusched
