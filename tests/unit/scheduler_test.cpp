#include <gpusched/scheduler.hpp>

#include <gtest/gtest.h>

#include <csignal>

namespace gpusched {
namespace {

std::vector<StartJob> starts(const std::vector<Action>& actions)
{
    std::vector<StartJob> result;
    for (const auto& action : actions) {
        if (const auto* start = std::get_if<StartJob>(&action)) {
            result.push_back(*start);
        }
    }
    return result;
}

std::vector<int> signals_sent(const std::vector<Action>& actions)
{
    std::vector<int> result;
    for (const auto& action : actions) {
        if (const auto* signal = std::get_if<SignalRunningJobs>(&action)) {
            result.push_back(signal->signal);
        }
    }
    return result;
}

bool arms_timer(const std::vector<Action>& actions)
{
    for (const auto& action : actions) {
        if (std::holds_alternative<ArmKillTimer>(action)) {
            return true;
        }
    }
    return false;
}

Command command(JobId id)
{
    return Command{id, "job " + std::to_string(id)};
}

constexpr JobOutcome k_success{0, 0};
constexpr JobOutcome k_exit_one{1, 0};

TEST(Scheduler, StartsAJobAsSoonAsAGpuIsFree)
{
    Scheduler scheduler(GpuPool({"0", "1"}), 8);
    auto first = starts(scheduler.on_command(command(1)));
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].command.id, 1u);
    EXPECT_EQ(first[0].gpu, GpuSlot{0});
    auto second = starts(scheduler.on_command(command(2)));
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].gpu, GpuSlot{1});
    EXPECT_TRUE(starts(scheduler.on_command(command(3))).empty());
    EXPECT_EQ(scheduler.queued_count(), 1u);

    auto next = starts(scheduler.on_job_exit(1, k_success));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 3u);
    EXPECT_EQ(next[0].gpu, GpuSlot{0});
}

TEST(Scheduler, HandsFreedGpusOutInTheOrderTheyWereFreed)
{
    Scheduler scheduler(GpuPool({"0", "1", "2"}), 8);
    for (JobId id = 1; id <= 3; ++id) {
        scheduler.on_command(command(id));
    }
    scheduler.on_job_exit(3, k_success); // frees GPU 2
    scheduler.on_job_exit(1, k_success); // frees GPU 0
    EXPECT_EQ(starts(scheduler.on_command(command(4)))[0].gpu, GpuSlot{2});
    EXPECT_EQ(starts(scheduler.on_command(command(5)))[0].gpu, GpuSlot{0});
}

TEST(Scheduler, ReadAheadIsBounded)
{
    Scheduler scheduler(GpuPool({"0"}), 2);
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
    Scheduler scheduler(GpuPool({"0"}), 4);
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
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_input_end();
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 0);
}

TEST(Scheduler, SpawnFailureReturnsTheGpuAndCountsAFailure)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    auto next = starts(scheduler.on_spawn_failure(1));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].command.id, 2u);
    EXPECT_EQ(next[0].gpu, GpuSlot{0});
    EXPECT_EQ(scheduler.counts().failed, 1u);
}

TEST(Scheduler, RejectedCommandsCountAsFailed)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_rejected_command();
    scheduler.on_input_end();
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 1);
}

TEST(Scheduler, ExitStatusCountsFailuresUpToOneHundred)
{
    for (const auto& [failures, status] :
         std::vector<std::pair<int, int>>{{0, 0}, {3, 3}, {100, 100}, {101, 101}, {150, 101}}) {
        Scheduler scheduler(GpuPool({"0"}), 4);
        for (int i = 0; i < failures; ++i) {
            scheduler.on_rejected_command();
        }
        scheduler.on_input_end();
        EXPECT_EQ(scheduler.exit_status(), status) << failures << " failures";
    }
}

TEST(Scheduler, FirstStopSignalIsPassedOnThenSecondKills)
{
    Scheduler scheduler(GpuPool({"0", "1"}), 4);
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

TEST(Scheduler, KillTimerKillsWhatIsStillRunning)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_command(command(1));
    scheduler.on_signal(SIGINT);
    EXPECT_EQ(signals_sent(scheduler.on_kill_timer()), std::vector<int>{SIGKILL});
    scheduler.on_job_exit(1, JobOutcome{0, SIGKILL});
    EXPECT_TRUE(signals_sent(scheduler.on_kill_timer()).empty());
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGINT);
}

TEST(Scheduler, StopWithNothingRunningIsDoneAtOnce)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    auto actions = scheduler.on_signal(SIGHUP);
    EXPECT_TRUE(actions.empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGHUP);
}

TEST(Scheduler, DrainLetsRunningJobsFinishAndStartsNoMore)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_command(command(1));
    scheduler.on_command(command(2));
    EXPECT_TRUE(scheduler.on_signal(SIGUSR1).empty());
    EXPECT_FALSE(scheduler.wants_input());
    EXPECT_FALSE(scheduler.done());
    EXPECT_TRUE(starts(scheduler.on_job_exit(1, k_success)).empty());
    EXPECT_TRUE(scheduler.done());
    EXPECT_EQ(scheduler.exit_status(), 0);
    EXPECT_EQ(scheduler.take_unstarted().size(), 1u);
}

TEST(Scheduler, StopAfterDrainStillStops)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    scheduler.on_command(command(1));
    scheduler.on_signal(SIGUSR1);
    EXPECT_EQ(signals_sent(scheduler.on_signal(SIGTERM)), std::vector<int>{SIGTERM});
    scheduler.on_job_exit(1, JobOutcome{0, SIGTERM});
    EXPECT_EQ(scheduler.exit_status(), 128 + SIGTERM);
}

TEST(Scheduler, UnknownJobExitIsALogicError)
{
    Scheduler scheduler(GpuPool({"0"}), 4);
    EXPECT_THROW(scheduler.on_job_exit(42, k_success), std::logic_error);
}

} // namespace
} // namespace gpusched
