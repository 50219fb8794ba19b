#include <gpusched/running_jobs.hpp>

#include "fake_process_table.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace gpusched {
namespace {

using testing::FakeProcessTable;
using Signal = FakeProcessTable::Signal;
using namespace std::chrono_literals;

constexpr auto k_kill_after = 10s;
const RunningJobs::Clock::time_point k_start{};

// Starts job `id` through the table, as the runner does.
RunningJob& start(RunningJobs& jobs, FakeProcessTable& table, JobId id)
{
    const std::string command = "job " + std::to_string(id);
    const Spawned spawned = table.spawn({command, nullptr, -1, -1, {}}).value();
    RunningJob job;
    job.id = id;
    job.command = command;
    job.started = k_start;
    job.leader = spawned.pid;
    job.token = spawned.token;
    return jobs.add(std::move(job));
}

// What the runner does on SIGCHLD: reap every ended child, note the ended shells, apply the
// rules for what came back to us.
void reap(RunningJobs& jobs, FakeProcessTable& table, RunningJobs::Clock::time_point now)
{
    while (const auto reaped = table.reap()) {
        if (RunningJob* job = jobs.find_leader(reaped->pid)) {
            job->outcome = JobOutcome{reaped->exit_code, reaped->signal};
            job->token_closed = table.released(job->token);
        }
    }
    jobs.after_reap(now);
}

TEST(RunningJobs, AStopSignalsEachJobsGroupOnce)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto first = start(jobs, table, 1).leader;
    const auto second = start(jobs, table, 2).leader;
    jobs.signal_all(SIGTERM, k_start);
    EXPECT_EQ(table.sent,
              (std::vector<Signal>{
                  {-first, SIGTERM}, {-first, SIGCONT}, {-second, SIGTERM}, {-second, SIGCONT}}));
}

TEST(RunningJobs, AStoppedJobIsContinuedSoThatItActsOnTheStopAtOnce)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto leader = start(jobs, table, 1).leader;
    table.stop_by_terminal(leader); // it read /dev/tty
    jobs.signal_all(SIGTERM, k_start);
    EXPECT_FALSE(table.alive(leader)) << "still stopped, it would wait for SIGKILL";
    EXPECT_EQ(table.sent_to(-leader),
              (std::vector<Signal>{{-leader, SIGTERM}, {-leader, SIGCONT}}));
}

TEST(RunningJobs, AStopReachesWhatLeftTheJobsGroup)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    // `setsid sleep 300 &`: a group of its own, still a child of the job's shell.
    table.add({500, 500, job.token, job.leader});
    jobs.signal_all(SIGTERM, k_start);
    EXPECT_EQ(table.sent_to(-job.leader),
              (std::vector<Signal>{{-job.leader, SIGTERM}, {-job.leader, SIGCONT}}));
    EXPECT_EQ(table.sent_to(500), (std::vector<Signal>{{500, SIGTERM}, {500, SIGCONT}}));
    EXPECT_FALSE(table.alive(500));
}

TEST(RunningJobs, AGroupIsNeverSignalledOnceItsLeaderIsReaped)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.add({501, leader, token, leader}); // `sleep 60 &`, in the job's group
    table.exit(leader, 0);
    reap(jobs, table, k_start);
    ASSERT_FALSE(jobs.find_token(token)->token_closed);

    jobs.signal_all(SIGTERM, k_start);
    EXPECT_TRUE(table.sent_to(-leader).empty());
    EXPECT_EQ(table.sent_to(501), (std::vector<Signal>{{501, SIGTERM}, {501, SIGCONT}}));
}

// Python's subprocess closes what it inherited: its child holds no token but stays in the
// job's group, whose id no new group can take while it has a member.
TEST(RunningJobs, WhatClosedTheTokenIsFoundInTheJobsGroupAfterItsShellEnded)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.add({502, leader, -1, leader});
    table.exit(leader, 0);
    reap(jobs, table, k_start);
    EXPECT_TRUE(jobs.find_token(token)->token_closed);
    EXPECT_TRUE(table.group_exists(leader));
    ASSERT_EQ(jobs.leftovers(*jobs.find_token(token)).size(), 1u);

    jobs.signal_all(SIGTERM, k_start);
    EXPECT_TRUE(table.sent_to(-leader).empty());
    EXPECT_EQ(table.sent_to(502), (std::vector<Signal>{{502, SIGTERM}, {502, SIGCONT}}));
    EXPECT_FALSE(table.group_exists(leader));
}

TEST(RunningJobs, AGroupSeenEmptyIsNeverSearchedAgain)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.add({503, 503, token, leader}); // setsid sleep &, holding the token
    table.exit(leader, 0);
    reap(jobs, table, k_start);
    jobs.find_token(token)->group_gone = !table.group_exists(leader);
    // Much later the id is someone else's group.
    table.add({leader, leader, -1, 999});
    jobs.signal_all(SIGTERM, k_start);
    EXPECT_TRUE(table.sent_to(leader).empty());
    EXPECT_TRUE(table.sent_to(-leader).empty());
    EXPECT_EQ(table.sent_to(503), (std::vector<Signal>{{503, SIGTERM}, {503, SIGCONT}}));
}

TEST(RunningJobs, LeftoversAreDueToBeNamedAMomentAfterTheShellEnded)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    auto& job = start(jobs, table, 1);
    const int token = job.token;
    jobs.linger(job, k_start);
    const auto due_at = jobs.next_deadline();
    ASSERT_TRUE(due_at.has_value());
    EXPECT_GT(*due_at, k_start);
    EXPECT_TRUE(jobs.fire(*due_at - 1ms).to_report.empty());
    EXPECT_EQ(jobs.fire(*due_at).to_report, std::vector<int>{token});
    EXPECT_TRUE(jobs.fire(*due_at + 1s).to_report.empty()) << "named once";
}

TEST(RunningJobs, TheKillDeadlineKillsWhatIgnoredTheStop)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    table.ignore_term(leader);
    jobs.signal_all(SIGTERM, k_start);
    jobs.arm_kill_deadline(k_start);
    EXPECT_EQ(jobs.next_deadline(), k_start + k_kill_after);

    EXPECT_FALSE(jobs.fire(k_start + k_kill_after - 1ms).kill_deadline_passed);
    EXPECT_TRUE(table.alive(leader));
    EXPECT_TRUE(jobs.fire(k_start + k_kill_after).kill_deadline_passed);
    EXPECT_FALSE(table.alive(leader));
    EXPECT_EQ(table.sent_to(-leader).back(), (Signal{-leader, SIGKILL}));
    EXPECT_TRUE(jobs.killing());
}

// trap '' TERM; setsid sh -c 'setsid sleep 300 & sleep 3' & wait -- with the descendants
// closing the job's token, so that only the process tree leads to them.
TEST(RunningJobs, AfterTheKillDeadlineEveryAdoptedProcessIsKilledAsItAppears)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    table.ignore_term(leader);
    table.add({600, 600, -1, leader}); // setsid sh -c ...
    table.add({601, 601, -1, 600});    // setsid sleep 300
    table.ignore_term(600);
    table.ignore_term(601);

    jobs.signal_all(SIGTERM, k_start);
    jobs.arm_kill_deadline(k_start);
    const auto deadline = k_start + k_kill_after;
    jobs.fire(deadline);
    EXPECT_FALSE(table.alive(leader));
    // Each death hands the next process of the chain to us; each is killed as it comes.
    for (int round = 0; round < 3; ++round) {
        reap(jobs, table, deadline);
    }
    EXPECT_FALSE(table.alive(600));
    EXPECT_FALSE(table.alive(601));
    EXPECT_TRUE(table.children().empty());
}

TEST(RunningJobs, WhileKillingASweepFindsWhatAppearedWithoutAnyChildEnding)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const int token = job.token;
    jobs.signal_all(SIGKILL, k_start);
    // A process holding the token appears after the kill (forked just before it).
    table.add({700, 700, token, 999});
    const auto sweep = jobs.next_deadline();
    ASSERT_TRUE(sweep.has_value());
    EXPECT_LE(*sweep - k_start, 1s);
    jobs.fire(*sweep);
    EXPECT_FALSE(table.alive(700));
}

TEST(RunningJobs, TimeoutStopsTheJobAndThenKillsIt)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, 60s);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.ignore_term(leader);
    EXPECT_EQ(jobs.next_deadline(), k_start + 60s);

    EXPECT_TRUE(jobs.fire(k_start + 59s).timed_out.empty());
    EXPECT_EQ(jobs.fire(k_start + 60s).timed_out, std::vector<int>{token});
    EXPECT_EQ(table.sent_to(-leader),
              (std::vector<Signal>{{-leader, SIGTERM}, {-leader, SIGCONT}}));
    EXPECT_TRUE(jobs.find_token(token)->timed_out);
    EXPECT_EQ(jobs.next_deadline(), k_start + 60s + k_kill_after);

    jobs.fire(k_start + 60s + k_kill_after);
    EXPECT_EQ(table.sent_to(-leader).back(), (Signal{-leader, SIGKILL}));
    EXPECT_FALSE(table.alive(leader));
}

TEST(RunningJobs, TimeoutStopsWhatAnEndedJobLeftBehind)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, 60s);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.add({800, 800, token, leader}); // setsid trainer &
    table.ignore_term(800);
    table.exit(leader, 0);
    reap(jobs, table, k_start + 1s);

    jobs.fire(k_start + 60s);
    EXPECT_TRUE(table.sent_to(-leader).empty());
    EXPECT_EQ(table.sent_to(800), (std::vector<Signal>{{800, SIGTERM}, {800, SIGCONT}}));
    EXPECT_TRUE(table.alive(800));
    jobs.fire(k_start + 60s + k_kill_after);
    EXPECT_FALSE(table.alive(800));
    EXPECT_TRUE(table.released(token));
}

TEST(RunningJobs, OtherJobsAreLeftAloneByOnesTimeout)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, 60s);
    const int first = start(jobs, table, 1).token;
    RunningJob later;
    const Spawned spawned = table.spawn({"job 2", nullptr, -1, -1, {}}).value();
    later.id = 2;
    later.started = k_start + 30s;
    later.leader = spawned.pid;
    later.token = spawned.token;
    jobs.add(std::move(later));

    EXPECT_EQ(jobs.fire(k_start + 60s).timed_out, std::vector<int>{first});
    EXPECT_TRUE(table.sent_to(-spawned.pid).empty());
}

// A queued job's own --timeout replaces the run's, longer or shorter; a job asking for none
// keeps the run's.
TEST(RunningJobs, AJobsOwnTimeoutReplacesTheRuns)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, 60s);
    RunningJob shorter;
    shorter.id = 1;
    shorter.timeout = 5s;
    shorter.started = k_start;
    EXPECT_EQ(jobs.add(std::move(shorter)).terminate_at, k_start + 5s);
    RunningJob longer;
    longer.id = 2;
    longer.timeout = 600s;
    longer.started = k_start;
    EXPECT_EQ(jobs.add(std::move(longer)).terminate_at, k_start + 600s);
    RunningJob plain;
    plain.id = 3;
    plain.started = k_start;
    EXPECT_EQ(jobs.add(std::move(plain)).terminate_at, k_start + 60s);
}

// `gpusched cancel`: one job gets SIGTERM at once, SIGKILL --kill-after later if it holds
// on; the others run on.
TEST(RunningJobs, ACancelStopsOneJobAsATimeoutWould)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const ProcessId leader = start(jobs, table, 1).leader;
    const ProcessId other = start(jobs, table, 2).leader;
    RunningJob& cancelled = *jobs.find_leader(leader);
    table.ignore_term(leader);
    jobs.cancel(cancelled, k_start + 1s);
    EXPECT_TRUE(cancelled.cancelled);
    EXPECT_FALSE(cancelled.timed_out);
    const std::vector<Signal> term{{-leader, SIGTERM}, {-leader, SIGCONT}};
    EXPECT_EQ(table.sent_to(-leader), term);
    EXPECT_TRUE(table.sent_to(-other).empty());
    jobs.cancel(cancelled, k_start + 2s); // a second cancel sends nothing more
    EXPECT_EQ(table.sent_to(-leader), term);
    EXPECT_EQ(jobs.next_deadline(), k_start + 1s + k_kill_after);
    jobs.fire(k_start + 1s + k_kill_after);
    EXPECT_FALSE(table.alive(leader));
    EXPECT_TRUE(table.alive(other));
}

// Ctrl-Z stopped gpusched and its jobs for 30 s, 40 s into a 60 s --timeout: the job still
// has 20 s to run, its run time leaves the stop out, and the grace period after SIGTERM is
// moved the same way.
TEST(RunningJobs, TimeStoppedIsNotCountedAgainstTheTimeout)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, 60s);
    auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.ignore_term(leader);
    jobs.postpone(30s);
    EXPECT_EQ(job.started, k_start + 30s) << "the run time is counted from here";
    EXPECT_EQ(jobs.next_deadline(), k_start + 90s);
    EXPECT_TRUE(jobs.fire(k_start + 89s).timed_out.empty());
    EXPECT_TRUE(table.sent_to(-leader).empty());
    EXPECT_EQ(jobs.fire(k_start + 90s).timed_out, std::vector<int>{token});

    jobs.postpone(5s); // stopped again during the grace period
    EXPECT_EQ(jobs.next_deadline(), k_start + 95s + k_kill_after);
    jobs.fire(k_start + 94s + k_kill_after);
    EXPECT_TRUE(table.alive(leader));
    jobs.fire(k_start + 95s + k_kill_after);
    EXPECT_FALSE(table.alive(leader));
}

TEST(RunningJobs, TimeStoppedMovesTheKillDeadlineOfAStop)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const ProcessId leader = start(jobs, table, 1).leader;
    table.ignore_term(leader);
    jobs.signal_all(SIGTERM, k_start);
    jobs.arm_kill_deadline(k_start);
    jobs.postpone(7s);
    EXPECT_EQ(jobs.next_deadline(), k_start + 7s + k_kill_after);
    EXPECT_FALSE(jobs.fire(k_start + k_kill_after).kill_deadline_passed);
    EXPECT_TRUE(jobs.fire(k_start + 7s + k_kill_after).kill_deadline_passed);
    EXPECT_FALSE(table.alive(leader));
}

TEST(RunningJobs, LeftoversAreNamedAndTheTokenIsGivenBack)
{
    FakeProcessTable table;
    RunningJobs jobs(table, k_kill_after, std::nullopt);
    const auto& job = start(jobs, table, 1);
    const ProcessId leader = job.leader;
    const int token = job.token;
    table.add({900, 900, token, leader});
    table.exit(leader, 0);
    reap(jobs, table, k_start);

    const auto left = jobs.leftovers(*jobs.find_token(token));
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].pid, 900);
    table.signal_process(900, SIGKILL);
    EXPECT_TRUE(table.released(token));
    jobs.take(token);
    EXPECT_TRUE(jobs.empty());
    EXPECT_TRUE(table.forgotten.contains(token));
}

} // namespace
} // namespace gpusched
