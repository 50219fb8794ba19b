// The worker's rules, in process: a QueueWorker over a real SQLite store (a database file in
// a temporary directory), driven as the runner drives it, turn by turn. What a job becomes
// is read back from the database.
#include <gpusched/queue/queue_worker.hpp>
#include <gpusched/queue/sqlite/sqlite_worker_store.hpp>
#include <gpusched/queue/sqlite/worker_presence.hpp>

#include <fmt/format.h>
#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path new_directory()
{
    return testing::make_temp_directory("gpusched-worker");
}

class Worker : public ::testing::Test {
protected:
    void SetUp() override { prepare_sqlite_queue_schema(m_database); }
    void TearDown() override
    {
        m_worker.reset();
        fs::remove_all(m_dir);
    }

    std::vector<std::int64_t> submit(std::vector<std::string> commands)
    {
        std::vector<NewSqliteJob> jobs;
        for (auto& command : commands) {
            jobs.push_back({std::move(command)});
        }
        return m_queue.submit(jobs, {}).ids;
    }

    QueueWorker& start_worker()
    {
        m_worker = std::make_unique<QueueWorker>(
            std::make_unique<SqliteWorkerStore>(
                SqliteWorkerSettings{m_dir / "queue.db", "default", this_host(), "0,1", ""}),
            this_host());
        return *m_worker;
    }

    // One turn of the runner's loop in which it can start `count` jobs and takes `taken` of
    // them: their ids.
    std::vector<JobId> turn(std::size_t count, std::size_t taken)
    {
        std::vector<JobId> ids;
        m_worker->begin_turn(count);
        while (ids.size() < taken) {
            auto line = m_worker->next_line();
            if (!line) {
                break;
            }
            ids.push_back(*line->id);
            m_worker->on_accepted(*line->id);
        }
        m_worker->end_turn();
        return ids;
    }

    // What someone did to the queue reaches the worker as a wake-up on its presence socket.
    void wake()
    {
        wake_workers(m_dir / "queue.db");
        const int presence = m_worker->held_while_jobs_run().at(0);
        m_worker->on_ready(pollfd{presence, POLLIN, POLLIN});
    }

    JobRecord job(std::int64_t id) { return m_queue.job(id).value(); }

    static sys::JobEnd ended(JobId id, JobOutcome outcome)
    {
        return sys::JobEnd{id, outcome, "0", 100.0, 1.0};
    }

    fs::path m_dir = new_directory();
    Database m_database{m_dir / "queue.db", 1s};
    SqliteQueue m_queue{m_database, "default"};
    std::unique_ptr<QueueWorker> m_worker;
};

TEST_F(Worker, TakesNoMoreThanTheRunnerCanStartAndGivesBackWhatItDidNotTakeInOrder)
{
    const auto ids = submit({"a", "b", "c", "d", "e"});
    start_worker();
    EXPECT_EQ(turn(3, 1), std::vector<JobId>{1});
    EXPECT_EQ(job(ids[0]).state, JobState::running);
    const auto listing = m_queue.list(10, 0);
    ASSERT_EQ(listing.first_queued.size(), 4u);
    EXPECT_EQ(listing.first_queued[0].command, "b") << "given back to the front, in order";
    EXPECT_EQ(listing.first_queued[1].command, "c");
    EXPECT_EQ(listing.first_queued[2].command, "d");
}

TEST_F(Worker, TakesNothingWhenTheRunnerCanStartNothing)
{
    submit({"a"});
    start_worker();
    EXPECT_TRUE(turn(0, 0).empty());
    EXPECT_EQ(m_queue.list(10, 0).queued, 1);
}

TEST_F(Worker, RefusesACommandWithANulByteWithoutRunningIt)
{
    const auto ids = submit({std::string("echo a\0rm -rf x", 15), "echo b"});
    start_worker();
    EXPECT_EQ(turn(2, 2), std::vector<JobId>{2});
    const auto refused = job(ids[0]);
    EXPECT_EQ(refused.state, JobState::refused);
    EXPECT_EQ(refused.note, "NUL byte");
}

TEST_F(Worker, HandsOutAJobWithItsSubmittersContext)
{
    const BatchOrigin origin{{m_dir.string(), {"VIRTUAL_ENV=/home/ann/venv"}, 027},
                             {static_cast<std::int64_t>(geteuid()), "ann", ""}};
    m_queue.submit({{"python3 train.py"}}, {0, false, &origin});
    start_worker();
    m_worker->begin_turn(1);
    const auto line = m_worker->next_line();
    ASSERT_TRUE(line);
    ASSERT_TRUE(line->context);
    EXPECT_EQ(line->context->directory, m_dir.string());
    EXPECT_EQ(line->context->environment, origin.context.environment);
    EXPECT_EQ(line->context->umask, 027u);
}

TEST_F(Worker, RefusesAnotherUsersJobNamingBoth)
{
    const BatchOrigin theirs{{m_dir.string(), {}, 022},
                             {static_cast<std::int64_t>(geteuid()) + 4242, "mallory", ""}};
    const auto ids = m_queue.submit({{"id -un"}}, {0, false, &theirs}).ids;
    const BatchOrigin ours{{m_dir.string(), {}, 022},
                           {static_cast<std::int64_t>(geteuid()), "us", ""}};
    m_queue.submit({{"true"}}, {0, false, &ours});
    start_worker();
    EXPECT_EQ(turn(2, 2), std::vector<JobId>{2}) << "the other user's job is never handed out";
    const auto refused = job(ids[0]);
    EXPECT_EQ(refused.state, JobState::refused);
    EXPECT_NE(refused.note.find("submitted by mallory"), std::string::npos) << refused.note;
    EXPECT_NE(refused.note.find(fmt::format("uid {}", geteuid())), std::string::npos)
        << refused.note;
}

TEST_F(Worker, RefusesAnotherUsersJobEvenWithoutADirectory)
{
    // A row no submitter writes (a user, no directory): still another user's.
    const BatchOrigin theirs{{"", {}, 022},
                             {static_cast<std::int64_t>(geteuid()) + 4242, "mallory", ""}};
    const auto ids = m_queue.submit({{"id -un"}}, {0, false, &theirs}).ids;
    start_worker();
    EXPECT_TRUE(turn(1, 1).empty());
    EXPECT_EQ(job(ids[0]).state, JobState::refused);
}

TEST_F(Worker, AJobWhoseDirectoryIsGoneFailsToStartAndIsNotHandedOut)
{
    const BatchOrigin origin{{(m_dir / "gone").string(), {}, 022},
                             {static_cast<std::int64_t>(geteuid()), "us", ""}};
    const auto ids = m_queue.submit({{"true"}}, {0, false, &origin}).ids;
    start_worker();
    EXPECT_TRUE(turn(1, 1).empty());
    m_worker->end_turn();
    const auto failed = job(ids[0]);
    EXPECT_EQ(failed.state, JobState::failed);
    EXPECT_EQ(failed.exit_code, 127);
    EXPECT_NE(failed.note.find("directory " + (m_dir / "gone").string() + " does not exist on"),
              std::string::npos)
        << failed.note;
}

TEST_F(Worker, ACancelOfATakenJobNotYetHandedEndsItUnrun)
{
    const auto ids = submit({"a"});
    auto& worker = start_worker();
    worker.begin_turn(1);
    EXPECT_EQ(m_queue.cancel(ids[0]), CancelOutcome::stopping) << "taken: running to the queue";
    wake();
    EXPECT_FALSE(worker.next_line()) << "cancelled before the runner took it";
    worker.end_turn();
    const auto cancelled = job(ids[0]);
    EXPECT_EQ(cancelled.state, JobState::cancelled);
    EXPECT_EQ(cancelled.note, "cancelled before it started");
    EXPECT_TRUE(worker.take_requests().cancel.empty()) << "nothing for the runner to stop";
}

TEST_F(Worker, ACancelOfAHandedJobStopsItTheMomentItStarts)
{
    const auto ids = submit({"a"});
    auto& worker = start_worker();
    ASSERT_EQ(turn(1, 1), std::vector<JobId>{1});
    m_queue.cancel(ids[0]);
    wake();
    EXPECT_TRUE(worker.take_requests().cancel.empty()) << "the runner stops only what runs";
    worker.on_started(1, "0");
    EXPECT_EQ(worker.take_requests().cancel, std::vector<JobId>{1});
    wake();
    EXPECT_TRUE(worker.take_requests().cancel.empty()) << "asked of the runner once";
    worker.on_ended(sys::JobEnd{1, {0, 15}, "0", 100.0, 1.0, false, true});
    worker.end_turn();
    const auto cancelled = job(ids[0]);
    EXPECT_EQ(cancelled.state, JobState::cancelled);
    EXPECT_EQ(cancelled.note, "cancelled while running");
}

TEST_F(Worker, RecordsAResultOnceAndGivesBackAJobAStopInterrupted)
{
    const auto ids = submit({"ok", "fails", "stopped"});
    auto& worker = start_worker();
    ASSERT_EQ(turn(3, 3), (std::vector<JobId>{1, 2, 3}));
    for (const JobId id : {1, 2, 3}) {
        worker.on_started(id, "0");
    }
    worker.on_ended(ended(1, {0, 0}));
    worker.on_ended(ended(2, {3, 0}));
    auto stopped = ended(3, {0, 15});
    stopped.stopped = true;
    worker.on_ended(stopped);
    worker.on_ended(ended(1, {0, 0})); // told twice: recorded once
    worker.end_turn();
    EXPECT_EQ(job(ids[0]).state, JobState::succeeded);
    EXPECT_EQ(job(ids[1]).state, JobState::failed);
    EXPECT_EQ(job(ids[1]).exit_code, 3);
    EXPECT_EQ(job(ids[2]).state, JobState::queued) << "to run again, elsewhere";
}

TEST_F(Worker, AStopGivesBackWhatItTookAndTakesNothingMore)
{
    submit({"a", "b"});
    auto& worker = start_worker();
    worker.begin_turn(2);
    worker.stop_reading();
    EXPECT_TRUE(worker.finished());
    EXPECT_FALSE(worker.next_line());
    worker.end_turn();
    EXPECT_EQ(m_queue.list(10, 0).queued, 2);
    worker.begin_turn(2);
    EXPECT_EQ(m_queue.list(10, 0).queued, 2) << "a stopped worker takes nothing";
}

TEST_F(Worker, APausedQueueGivesNoJobAndPausedGpusReachTheRunner)
{
    submit({"a"});
    m_queue.pause("");
    m_queue.pause("1");
    auto& worker = start_worker();
    const auto requests = worker.take_requests();
    ASSERT_TRUE(requests.paused_gpus);
    EXPECT_EQ(*requests.paused_gpus, std::set<std::string>{"1"});
    EXPECT_TRUE(turn(1, 1).empty());
    EXPECT_EQ(m_queue.list(10, 0).queued, 1);
    m_queue.resume("");
    wake();
    EXPECT_EQ(*worker.take_requests().paused_gpus, std::set<std::string>{});
    EXPECT_EQ(turn(1, 1), std::vector<JobId>{1});
}

// A GPU paused after the worker's last look, as its GPU's lease frees: the take reads the
// pause with the job, and the job is held (given back) until the runner knows of the pause,
// rather than started on the GPU the runner still takes for free.
TEST_F(Worker, AGpuPausedSinceTheLastLookHoldsTheJobsTakenWithIt)
{
    submit({"a"});
    auto& worker = start_worker();
    EXPECT_FALSE(worker.take_requests().paused_gpus);
    m_queue.pause("0"); // no wake-up: the worker has not looked since
    EXPECT_TRUE(turn(1, 1).empty()) << "taken with the pause: held";
    EXPECT_EQ(job(1).state, JobState::queued) << "given back";
    const auto requests = worker.take_requests();
    ASSERT_TRUE(requests.paused_gpus);
    EXPECT_EQ(*requests.paused_gpus, std::set<std::string>{"0"});
    EXPECT_EQ(turn(1, 1), std::vector<JobId>{1}) << "the runner, told, starts it elsewhere";
}

TEST_F(Worker, IsSettledOnceWhatItOwesIsWritten)
{
    submit({"a"});
    auto& worker = start_worker();
    ASSERT_EQ(turn(1, 1), std::vector<JobId>{1});
    worker.on_started(1, "0");
    worker.on_ended(ended(1, {0, 0}));
    worker.on_jobs_over();
    EXPECT_TRUE(worker.settled());
    EXPECT_EQ(job(1).state, JobState::succeeded);
}

} // namespace
} // namespace gpusched::queue
