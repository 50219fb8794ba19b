// The local queue against a real SQLite database file: order, each job taken once, results
// recorded once, a dead worker's jobs back at the front, and the verbs that change the queue.
#include <gpusched/queue/sqlite/database_changes.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/worker_presence.hpp>

#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class SqliteQueueFile : public ::testing::Test {
protected:
    void SetUp() override { m_dir = testing::make_temp_directory("gpusched-db"); }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path db_path() const { return m_dir / "queue.db"; }

    static std::vector<NewSqliteJob> commands(std::initializer_list<const char*> texts)
    {
        std::vector<NewSqliteJob> jobs;
        for (const auto* text : texts) {
            jobs.push_back({text});
        }
        return jobs;
    }

    static std::int64_t user_version(Database& database)
    {
        auto version = database.prepare("PRAGMA user_version");
        const auto found = version.step() ? version.integer(0) : -1;
        version.reset();
        return found;
    }

    static JobResult succeeded(std::int64_t id)
    {
        return JobResult{id, JobState::succeeded, 0, 0, "0", 100.0, 1.5, ""};
    }

    fs::path m_dir;
};

TEST_F(SqliteQueueFile, JobsAreTakenInOrderOfPriorityThenPositionAndFrontGoesFirst)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "default");
    queue.submit(commands({"a", "b"}), {});
    queue.submit(commands({"c", "d"}), {0, true});
    queue.submit(commands({"urgent"}), {5, false});

    std::vector<std::string> order;
    while (const auto job = queue.take("w1")) {
        order.push_back(job->command);
        EXPECT_EQ(job->state, JobState::running);
        EXPECT_EQ(job->worker, "w1");
    }
    EXPECT_EQ(order, (std::vector<std::string>{"urgent", "c", "d", "a", "b"}));
}

// A job asking for more GPUs than the worker has is passed by, for a worker that has them.
TEST_F(SqliteQueueFile, AJobAskingForMoreGpusThanTheWorkerHasIsLeftForAnother)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "default");
    const BatchOrigin four{{"/tmp", {}, 022, {4, {}, {}}}, {0, "root", ""}};
    const auto big = queue.submit(commands({"big"}), {0, false, &four}).ids.front();
    queue.submit(commands({"small"}), {});
    const auto small = queue.take("two-gpus", "", 2);
    ASSERT_TRUE(small);
    EXPECT_EQ(small->command, "small");
    EXPECT_FALSE(queue.take("two-gpus", "", 2));
    const auto taken = queue.take("eight-gpus", "", 8);
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->id, big);
}

// A follower is woken by a commit to the database, not by another file of its directory.
TEST_F(SqliteQueueFile, AWaitForChangesEndsAtACommitAndNotAtAnotherFilesWrite)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "default");
    DatabaseChanges changes(db_path());
    EXPECT_FALSE(changes.wait(50ms)) << "nothing written";
    std::ofstream(m_dir / "worker-default.log") << "a worker's log line\n";
    EXPECT_FALSE(changes.wait(50ms)) << "another file of the directory";
    std::thread writer([&] {
        Database other(db_path(), 1s);
        SqliteQueue(other, "default").submit(commands({"true"}), {});
    });
    EXPECT_TRUE(changes.wait(10s));
    writer.join();
}

TEST_F(SqliteQueueFile, QueuesOfOneDatabaseAreApart)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue first(database, "first");
    SqliteQueue second(database, "second");
    first.submit(commands({"one"}), {});
    EXPECT_FALSE(second.take("w"));
    ASSERT_TRUE(first.take("w"));
}

TEST_F(SqliteQueueFile, AResultIsRecordedOnceAndOnlyByTheWorkerThatHoldsTheJob)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    const auto submitted = queue.submit(commands({"x"}), {});
    const auto job = queue.take("w1");
    ASSERT_TRUE(job);
    EXPECT_FALSE(queue.finish("w2", succeeded(job->id)));
    EXPECT_TRUE(queue.finish("w1", succeeded(job->id)));
    EXPECT_FALSE(queue.finish("w1", succeeded(job->id)));
    const auto ended = queue.job(submitted.ids.at(0));
    ASSERT_TRUE(ended);
    EXPECT_EQ(ended->state, JobState::succeeded);
    EXPECT_DOUBLE_EQ(ended->runtime, 1.5);
}

TEST_F(SqliteQueueFile, TwoConnectionsNeverTakeTheSameJob)
{
    Database one(db_path(), 5s);
    prepare_sqlite_queue_schema(one);
    Database two(db_path(), 5s);
    SqliteQueue first(one, "q");
    SqliteQueue second(two, "q");
    std::vector<NewSqliteJob> jobs(200, NewSqliteJob{"true"});
    first.submit(jobs, {});
    std::set<std::int64_t> taken;
    for (int i = 0; i < 100; ++i) {
        const auto a = first.take("a");
        const auto b = second.take("b");
        ASSERT_TRUE(a && b);
        EXPECT_TRUE(taken.insert(a->id).second);
        EXPECT_TRUE(taken.insert(b->id).second);
    }
    EXPECT_FALSE(first.take("a"));
    EXPECT_EQ(taken.size(), 200u);
}

TEST_F(SqliteQueueFile, ADeadWorkersJobsGoBackToTheFrontInTheirOrderAndALiveOnesStay)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    queue.submit(commands({"1", "2", "3", "4"}), {});
    queue.add_worker({"dead", "host", 1, "0,1", 0});
    queue.add_worker({"alive", "host", 2, "2", 0});
    const auto one = queue.take("dead");
    const auto two = queue.take("dead");
    const auto three = queue.take("alive");
    ASSERT_TRUE(one && two && three);

    const auto returned =
        queue.reclaim([](const WorkerRecord& worker) { return worker.id == "alive"; });
    EXPECT_EQ(returned, 2);
    EXPECT_EQ(queue.workers().size(), 1u);
    EXPECT_FALSE(queue.finish("dead", succeeded(one->id))); // too late: it is queued again
    const auto again = queue.take("alive");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->command, "1");
    EXPECT_EQ(again->returned, 1);
    EXPECT_EQ(queue.take("alive")->command, "2");
    EXPECT_EQ(queue.take("alive")->command, "4");
    EXPECT_TRUE(queue.finish("alive", succeeded(three->id)));
}

// A worker lists itself again once its GPUs are known: a stop asked for in between, and since
// when it serves, are kept.
TEST_F(SqliteQueueFile, AWorkerListedAgainKeepsItsStopAndSince)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    queue.add_worker({"w", "host", 7, "", 100});
    ASSERT_TRUE(queue.ask_to_stop("w", false));
    queue.add_worker({"w", "host", 7, "0,1", 200});
    EXPECT_EQ(queue.stop_asked("w"), std::optional<bool>(false));
    const auto workers = queue.workers();
    ASSERT_EQ(workers.size(), 1u);
    EXPECT_EQ(workers[0].gpus, "0,1");
    EXPECT_EQ(workers[0].since, 100);
}

// A job a stopping worker gives back is queued as if it had never started, and counted as
// returned; one it took but never started is not counted.
TEST_F(SqliteQueueFile, AJobGivenBackIsQueuedAgainWithNothingOfItsStart)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    queue.submit(commands({"started", "not started"}), {});
    queue.add_worker({"w", "host", 1, "0,1", 0});
    const auto started = queue.take("w");
    const auto not_started = queue.take("w");
    ASSERT_TRUE(started && not_started);
    queue.note_start("w", started->id, "0", 1000);
    EXPECT_TRUE(queue.give_back("w", started->id));
    EXPECT_TRUE(queue.give_back("w", not_started->id));
    const auto listing = queue.list(10, 10);
    ASSERT_EQ(listing.first_queued.size(), 2u);
    for (const auto& job : listing.first_queued) {
        EXPECT_EQ(job.started, 0) << job.command;
        EXPECT_EQ(job.gpu, "") << job.command;
        EXPECT_EQ(job.worker, "") << job.command;
        EXPECT_EQ(job.returned, job.command == "started" ? 1 : 0) << job.command;
    }
}

TEST_F(SqliteQueueFile, CancelRemovesAQueuedJobAndAsksTheWorkerOfARunningOne)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    const auto ids = queue.submit(commands({"run", "wait"}), {}).ids;
    const auto running = queue.take("w");
    ASSERT_TRUE(running);
    EXPECT_EQ(queue.cancel(ids[1]), CancelOutcome::removed);
    EXPECT_EQ(queue.job(ids[1])->state, JobState::cancelled);
    EXPECT_FALSE(queue.take("w"));
    EXPECT_EQ(queue.cancel(ids[0]), CancelOutcome::stopping);
    EXPECT_EQ(queue.cancel_requests("w"), std::vector<std::int64_t>{ids[0]});
    EXPECT_EQ(queue.cancel(999), CancelOutcome::unknown);
    JobResult cancelled = succeeded(ids[0]);
    cancelled.state = JobState::cancelled;
    cancelled.signal = 15;
    EXPECT_TRUE(queue.finish("w", cancelled));
    EXPECT_EQ(queue.cancel(ids[0]), CancelOutcome::already_ended);
}

TEST_F(SqliteQueueFile, APausedQueueGivesNothingUntilResumed)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    queue.submit(commands({"x"}), {});
    queue.pause("");
    queue.pause("1");
    EXPECT_EQ(queue.paused(), (std::set<std::string>{"", "1"}));
    EXPECT_FALSE(queue.take("w"));
    queue.resume("1");
    EXPECT_FALSE(queue.take("w"));
    queue.resume("");
    EXPECT_TRUE(queue.take("w"));
}

TEST_F(SqliteQueueFile, RetryQueuesAFailedJobAgainButNotARunningOrSucceededOne)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    const auto ids = queue.submit(commands({"fails", "works"}), {}).ids;
    const auto fails = queue.take("w");
    EXPECT_FALSE(queue.retry(fails->id).ok()); // running
    JobResult failed = succeeded(fails->id);
    failed.state = JobState::failed;
    failed.exit_code = 3;
    ASSERT_TRUE(queue.finish("w", failed));
    const auto works = queue.take("w");
    ASSERT_TRUE(queue.finish("w", succeeded(works->id)));
    EXPECT_FALSE(queue.retry(works->id).ok());
    EXPECT_TRUE(queue.retry(fails->id).ok());
    const auto again = queue.take("w");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->id, ids[0]);
    EXPECT_EQ(again->exit_code, 0);
}

TEST_F(SqliteQueueFile, ListingCountsAndOrdersAndPurgeRemovesOnlyEndedJobs)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    queue.submit(commands({"a", "b", "c", "d"}), {});
    const auto a = queue.take("w");
    queue.take("w");
    ASSERT_TRUE(queue.finish("w", succeeded(a->id)));
    const auto listing = queue.list(1, 10);
    EXPECT_EQ(listing.queued, 2);
    ASSERT_EQ(listing.first_queued.size(), 1u);
    EXPECT_EQ(listing.first_queued[0].command, "c");
    EXPECT_EQ(listing.running.size(), 1u);
    EXPECT_EQ(listing.succeeded, 1);
    ASSERT_EQ(listing.recent.size(), 1u);
    EXPECT_EQ(queue.purge(std::nullopt).size(), 1U);
    EXPECT_EQ(queue.list(10, 10).queued, 2);
    EXPECT_EQ(queue.list(10, 10).running.size(), 1u);
}

// A batch holds its submitter's environment: once its jobs are purged and a week has passed
// since it was made, it goes too, with what it waited for; a newer one stays (its submission
// may still be adding jobs to it).
TEST_F(SqliteQueueFile, PurgeForgetsTheBatchesWithNoJobLeft)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    const auto old_batch = queue.submit(commands({"old"}), {}).ids;
    queue.submit(commands({"new"}), {});
    for (int i = 0; i < 2; ++i) {
        const auto job = queue.take("w");
        ASSERT_TRUE(job);
        ASSERT_TRUE(queue.finish("w", succeeded(job->id)));
    }
    const auto batches = [&] {
        auto count = database.prepare("SELECT count(*) FROM batches");
        EXPECT_TRUE(count.step());
        const auto n = count.integer(0);
        count.reset();
        return n;
    };
    ASSERT_EQ(batches(), 2);
    database
        .prepare("UPDATE batches SET made = 1000 WHERE id = (SELECT batch FROM jobs WHERE id = ?)")
        .bind(1, old_batch.at(0))
        .run();
    EXPECT_EQ(queue.purge(std::nullopt).size(), 2u);
    EXPECT_EQ(batches(), 1) << "the week-old batch is gone, the new one kept";
}

TEST_F(SqliteQueueFile, AFileThatIsNotADatabaseIsNamedInTheError)
{
    {
        std::ofstream garbage(db_path());
        garbage << std::string(8192, 'x');
    }
    try {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        FAIL() << "a file of garbage was opened as a database";
    } catch (const DatabaseError& error) {
        EXPECT_NE(std::string(error.what()).find(db_path().string()), std::string::npos)
            << error.what();
        EXPECT_NE(std::string(error.what()).find("move it aside"), std::string::npos)
            << error.what();
    }
}

// The schema's version is in the database header, where a look costs no table read; a
// database of an earlier version (kept in meta only, and without jobs.output) is brought up
// to date with its jobs, and one of a later version is refused.
TEST_F(SqliteQueueFile, TheSchemaVersionIsKeptInTheHeaderAndAnOlderDatabaseIsBroughtUpToDate)
{
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        EXPECT_EQ(user_version(database), 8);
        SqliteQueue(database, "default").submit(commands({"kept"}), {});
        // As version 1 left it.
        database.execute(
            "ALTER TABLE jobs DROP COLUMN output; ALTER TABLE jobs DROP COLUMN peak_memory; "
            "ALTER TABLE jobs DROP COLUMN memory_reruns; "
            "ALTER TABLE batches DROP COLUMN "
            "directory; ALTER TABLE batches DROP COLUMN environment; ALTER TABLE "
            "batches DROP COLUMN umask; ALTER TABLE batches DROP COLUMN uid; ALTER "
            "TABLE batches DROP COLUMN user; ALTER TABLE batches DROP COLUMN request; "
            "DROP INDEX batches_named; ALTER TABLE batches DROP COLUMN "
            "name; UPDATE meta SET value = '1' WHERE key "
            "= 'schema'; ALTER TABLE workers DROP COLUMN user; ALTER TABLE workers DROP "
            "COLUMN stop; PRAGMA user_version = 0");
    }
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    EXPECT_EQ(user_version(database), 8);
    SqliteQueue queue(database, "default");
    const auto job = queue.take("worker", "/output");
    ASSERT_TRUE(job);
    EXPECT_EQ(job->command, "kept");
    EXPECT_EQ(job->output, "/output");
    EXPECT_EQ(job->directory, "") << "queued before directories were recorded";
    EXPECT_FALSE(queue.batch_origin(job->batch)) << "its job runs as the worker does";

    // A job queued now records where, with what and as whom it runs, what it asks of its
    // worker and its label.
    const BatchOrigin origin{{"/home/ann/proj",
                              {"A=1", "VIRTUAL_ENV=/home/ann/venv"},
                              027,
                              {.gpus = 2, .timeout = 90s, .retries = 1}},
                             {1000, "ann", ""},
                             "sweep"};
    const auto submitted =
        queue.submit(commands({"python3 train.py"}), {0, false, &origin});
    const auto recorded = queue.job(submitted.ids.front());
    ASSERT_TRUE(recorded);
    EXPECT_EQ(recorded->directory, "/home/ann/proj");
    EXPECT_EQ(recorded->submitter.uid, 1000);
    EXPECT_EQ(recorded->submitter.user, "ann");
    EXPECT_EQ(recorded->name, "sweep");
    EXPECT_EQ(queue.ids_named("sweep"), submitted.ids);
    const auto read = queue.batch_origin(submitted.batch);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->context.environment, origin.context.environment);
    EXPECT_EQ(read->context.umask, 027u);
    EXPECT_EQ(read->context.request, origin.context.request);

    database.execute("PRAGMA user_version = 9");
    try {
        prepare_sqlite_queue_schema(database);
        ADD_FAILURE() << "a database of a later version was used";
    } catch (const DatabaseError& error) {
        EXPECT_NE(std::string(error.what()).find("made by another version of gpusched (schema 9"),
                  std::string::npos)
            << error.what();
    }
}

// Schema 7 keeps each job's GPU memory peak: a schema 6 database gains the column with its
// jobs, a worker's result sets it, and a value no worker writes reads as none.
TEST_F(SqliteQueueFile, ASchema6DatabaseGainsEachJobsGpuMemoryPeak)
{
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        SqliteQueue(database, "default").submit(commands({"kept"}), {});
        database.execute("ALTER TABLE jobs DROP COLUMN peak_memory; UPDATE meta SET value = '6' "
                         "WHERE key = 'schema'; PRAGMA user_version = 6");
    }
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    EXPECT_EQ(user_version(database), 8);
    SqliteQueue queue(database, "default");
    const auto job = queue.take("worker", "/output");
    ASSERT_TRUE(job);
    EXPECT_EQ(job->command, "kept");
    EXPECT_EQ(job->peak_memory, 0u);
    JobResult result{job->id, JobState::succeeded, 0, 0, "0", 1, 2, ""};
    result.peak_memory = std::uint64_t{30000} << 20;
    ASSERT_TRUE(queue.finish("worker", result));
    EXPECT_EQ(queue.job(job->id)->peak_memory, std::uint64_t{30000} << 20);
    database.execute("UPDATE jobs SET peak_memory = -5");
    EXPECT_EQ(queue.job(job->id)->peak_memory, 0u);
    database.execute("UPDATE jobs SET peak_memory = 'a lot'");
    EXPECT_EQ(queue.job(job->id)->peak_memory, 0u);
}

// Schema 5 kept what a batch's jobs ask in three columns: the upgrade makes each batch's
// request of them, whole, and a job whose batch asked for more GPUs than a worker has is still
// passed by at the take.
TEST_F(SqliteQueueFile, ASchema5DatabasesRequestsAreKeptWholeByTheUpgrade)
{
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        const BatchOrigin asking{{"/home/ann/proj", {"A=1"}, 022, {}}, {0, "root", ""}, ""};
        SqliteQueue queue(database, "default");
        queue.submit(commands({"wide"}), {0, false, &asking});
        queue.submit(commands({"narrow"}), {0, false, &asking});
        // As version 5 left them: batch 1 asks 4 GPUs, 90 s and 2 retries; batch 2 nothing.
        database.execute(
            "ALTER TABLE batches DROP COLUMN request; ALTER TABLE batches ADD COLUMN gpus "
            "INTEGER; ALTER TABLE batches ADD COLUMN timeout_ms INTEGER; ALTER TABLE batches "
            "ADD COLUMN retries INTEGER; UPDATE batches SET gpus = 4, timeout_ms = 90000, "
            "retries = 2 WHERE id = 1; UPDATE meta SET value = '5' WHERE key = 'schema'; "
            "PRAGMA user_version = 5");
    }
    // Schema 5 made it private once: its owner's chmod since is a choice the upgrade keeps.
    ::chmod(db_path().c_str(), 0640);
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    EXPECT_EQ(user_version(database), 8);
    struct stat status {};
    ASSERT_EQ(::stat(db_path().c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 07777, 0640u);
    SqliteQueue queue(database, "default");
    const auto wide = queue.batch_origin(1);
    ASSERT_TRUE(wide);
    EXPECT_EQ(wide->context.request, (JobRequest{.gpus = 4, .timeout = 90s, .retries = 2}));
    EXPECT_FALSE(wide->unreadable);
    EXPECT_EQ(queue.batch_origin(2)->context.request, JobRequest{});
    const auto taken = queue.take("worker", "/output", 2);
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->command, "narrow") << "a worker of 2 GPUs passes the job asking 4 by";
    EXPECT_EQ(queue.take("worker", "/output", 4)->command, "wide");
}

// A request this version cannot honour (a row no gpusched of this version wrote) is never run
// without it: its batch says why, and a worker refuses its jobs.
TEST_F(SqliteQueueFile, ARequestItCannotReadIsSaidSoNotDropped)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    const BatchOrigin asking{{"/home/ann/proj", {"A=1"}, 022, {}}, {0, "root", ""}, ""};
    SqliteQueue queue(database, "default");
    queue.submit(commands({"later"}), {0, false, &asking});
    database.execute("UPDATE batches SET request = ' memory=20G'");
    const auto origin = queue.batch_origin(1);
    ASSERT_TRUE(origin);
    ASSERT_TRUE(origin->unreadable);
    EXPECT_NE(origin->unreadable->find("memory=20G"), std::string::npos) << *origin->unreadable;
    EXPECT_TRUE(queue.take("worker", "/output", 1)) << "taken, to be refused, not left queued";
}

// A database keeps each submitter's environment: it is made readable by its owner alone, and
// one an earlier version made with the umask's mode loses the others' bits at its upgrade,
// once (a chmod after that is the owner's choice to share it, and is kept).
TEST_F(SqliteQueueFile, ADatabaseIsReadableByItsOwnerAloneAndAnOlderOneIsMadeSo)
{
    const auto mode_of = [](const std::filesystem::path& path) {
        struct stat status {};
        return ::stat(path.c_str(), &status) == 0 ? status.st_mode & 07777 : 07777u;
    };
    const auto old_umask = ::umask(022);
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        SqliteQueue(database, "default").submit(commands({"kept"}), {});
        EXPECT_EQ(mode_of(db_path()), 0600u);
        EXPECT_EQ(mode_of(db_path().string() + "-wal"), 0600u);
        EXPECT_EQ(mode_of(db_path().string() + "-shm"), 0600u);
        // As version 4 left it: readable by everyone.
        database.execute(
            "UPDATE meta SET value = '4' WHERE key = 'schema'; PRAGMA user_version = 0");
    }
    ::chmod(db_path().c_str(), 0644);
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        EXPECT_EQ(mode_of(db_path()), 0600u);
        EXPECT_EQ(SqliteQueue(database, "default").list(5, 5).queued, 1);
    }
    ::chmod(db_path().c_str(), 0640);
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        EXPECT_EQ(mode_of(db_path()), 0640u) << "shared by its owner's choice";
    }
    ::umask(old_umask);
}

TEST_F(SqliteQueueFile, AHundredThousandJobsGoInAsOneTransaction)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    SqliteQueue queue(database, "q");
    std::vector<NewSqliteJob> jobs(100'000, NewSqliteJob{"python train.py --seed 1"});
    const auto submitted = queue.submit(jobs, {});
    ASSERT_EQ(submitted.ids.size(), 100'000u);
    EXPECT_EQ(submitted.ids.back() - submitted.ids.front(), 99'999);
    EXPECT_EQ(queue.list(5, 5).queued, 100'000);
}

TEST_F(SqliteQueueFile, AWorkerIsPresentWhileItHoldsItsSocketAndOnlyThisHostsWorkersAreTakenForGone)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    const std::string id = worker_id_prefix("node.1") + "42:abc";
    {
        WorkerPresence presence(db_path(), id);
        const auto present = present_workers(db_path()).value();
        EXPECT_TRUE(present.contains(id));
        EXPECT_FALSE(worker_gone(id, "node.1", present, "node.1"));
        // Woken: its socket becomes readable.
        wake_workers(db_path());
        pollfd ready{presence.fd(), POLLIN, 0};
        EXPECT_EQ(poll(&ready, 1, 5000), 1);
        presence.drain();
        EXPECT_EQ(poll(&ready, 1, 0), 0);
    }
    const auto present = present_workers(db_path()).value();
    EXPECT_FALSE(present.contains(id));
    EXPECT_TRUE(worker_gone(id, "node.1", present, "node.1"));
    EXPECT_TRUE(worker_gone(id, "", present, "node.1"));
    // Another host's (or container's) worker may be alive where this machine cannot see it.
    EXPECT_FALSE(worker_gone(id, "node.2", present, "node.1"));
    EXPECT_FALSE(worker_gone(id, "", present, "node.2"));
    // A worker recorded before ids read HOST:PID:RANDOM, with no host of its own.
    EXPECT_TRUE(worker_gone("node-1-42-abc", "", present, "node.1"));
}

// A long host name makes a socket name past the kernel's 107 bytes, which is shortened with
// a hash and cannot be read back: the worker is still found present (else its running jobs
// would be run a second time while it runs them).
TEST_F(SqliteQueueFile, AWorkerOfALongHostNameIsPresent)
{
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    const std::string host = "gpu-node-017.rack-04.machine-learning.cluster.example-university.edu";
    const std::string id = worker_id_prefix(host) + "4194304:0123abcd";
    WorkerPresence presence(db_path(), id);
    const auto present = present_workers(db_path()).value();
    EXPECT_TRUE(present.contains(id));
    EXPECT_FALSE(worker_gone(id, host, present, host));
    EXPECT_FALSE(worker_gone(id, "", present, host));
}

// With no descriptor free, the table of sockets cannot be read: who is present is unknown,
// not "no one" (else every running job of this host's workers would be run a second time).
TEST_F(SqliteQueueFile, WhoIsPresentIsUnknownWithoutAFreeDescriptor)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    Database database(db_path(), 1s);
    prepare_sqlite_queue_schema(database);
    WorkerPresence presence(db_path(), worker_id_prefix("node.1") + "7:abc");
    rlimit before{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
    const int lowest_free = dup(0);
    ASSERT_GE(lowest_free, 0);
    close(lowest_free);
    rlimit none_free = before;
    none_free.rlim_cur = static_cast<rlim_t>(lowest_free);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none_free), 0);
    const auto present = present_workers(db_path());
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
    EXPECT_FALSE(present.has_value());
    ASSERT_TRUE(present_workers(db_path()).has_value());
    EXPECT_EQ(present_workers(db_path())->names.size(), 1u);
}

} // namespace
} // namespace gpusched::queue
