// What only a local queue (an SQLite database, no server) does, with real processes: workers
// whose presence ends with them, a first submit that starts a worker, a worker's batch take,
// descriptors running short, and a database that is not one, cannot be written, or sits on a
// full disk. What both stores do is in queue_test.cpp.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class SqliteQueue : public ::testing::Test, public QueueFixture {
protected:
    SqliteQueue() : QueueFixture(Store::sqlite) {}
};

TEST_F(SqliteQueue, AWorkersOwnOutputDirectoryHoldsTheJobsStreamsOnly)
{
    start_worker("0");
    ASSERT_EQ(run(m_dir, submit("echo out; echo err >&2\n", {"--wait"})).exit_status, 0);
    const auto own = m_dir / "queue.db-output" / "default";
    EXPECT_EQ(read_file(own / "1.out"), "out\n");
    EXPECT_EQ(read_file(own / "1.err"), "err\n");
    EXPECT_FALSE(std::filesystem::exists(own / "1.info"));
    TempDir logs_dir;
    const auto logs = run(logs_dir, {{"logs", "--db", db(), "1"}});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_NE(logs.out.find("out"), std::string::npos) << logs.out;
    stop_workers();

    const auto chosen = m_dir / "chosen";
    start_worker("0", {"--output-dir", chosen.string()});
    ASSERT_EQ(run(m_dir, submit("echo again\n", {"--wait"})).exit_status, 0);
    EXPECT_EQ(read_file(chosen / "2.out"), "again\n");
    EXPECT_NE(read_file(chosen / "2.info").find("exit: 0\n"), std::string::npos);
}

TEST_F(SqliteQueue, AWorkerTakesNoMoreJobsThanItCanStartAndKeepsTheirOrder)
{
    ASSERT_EQ(run(m_dir, submit(logging_commands(300, "sleep 0.01; "))).exit_status, 0);
    std::atomic<bool> done = false;
    std::atomic<int> most_running = 0;
    std::thread sampler([&] {
        sqlite3* handle = nullptr;
        sqlite3_open_v2(db().c_str(), &handle, SQLITE_OPEN_READONLY, nullptr);
        sqlite3_busy_timeout(handle, 1000);
        sqlite3_stmt* query = nullptr;
        sqlite3_prepare_v2(handle,
                           "SELECT count(*) FROM jobs WHERE state = 'running' GROUP BY worker",
                           -1, &query, nullptr);
        while (!done) {
            while (sqlite3_step(query) == SQLITE_ROW) {
                most_running = std::max(most_running.load(), sqlite3_column_int(query, 0));
            }
            sqlite3_reset(query);
        }
        sqlite3_finalize(query);
        sqlite3_close(handle);
    });
    start_worker("0,1,2", {"--jobs-per-gpu", "2"});
    start_worker("3");
    const bool all_ran = eventually([&] { return logged().size() == 300; }, 60s);
    done = true;
    sampler.join();
    ASSERT_TRUE(all_ran) << logged().size() << " of 300 ran";
    EXPECT_LE(most_running, 6) << "a worker held jobs it could not start";
    EXPECT_GE(most_running, 2) << "the sampler saw the jobs run";
    for (const auto& [line, count] : logged()) {
        EXPECT_EQ(count, 1) << line;
    }
    // Each worker started its jobs in the order it took them: the queue's.
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db().c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* query = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(handle, "SELECT worker, id, started FROM jobs ORDER BY worker, id",
                                 -1, &query, nullptr),
              SQLITE_OK);
    std::map<std::string, std::pair<int, double>> last_start;
    while (query != nullptr && sqlite3_step(query) == SQLITE_ROW) {
        const std::string worker = reinterpret_cast<const char*>(sqlite3_column_text(query, 0));
        const auto id = sqlite3_column_int(query, 1);
        const auto started = sqlite3_column_double(query, 2);
        if (const auto last = last_start.find(worker); last != last_start.end()) {
            EXPECT_LE(last->second.second, started)
                << "job " << id << " started before job " << last->second.first;
        }
        last_start[worker] = {id, started};
    }
    sqlite3_finalize(query);
    sqlite3_close(handle);
    EXPECT_EQ(last_start.size(), 2u) << "both workers ran jobs";
}

TEST_F(SqliteQueue, AKilledWorkersJobGoesBackToTheQueueAndRunsOnAnotherWorker)
{
    auto& first = start_worker("0");
    const auto marker = m_dir / "started";
    const auto submitted = run(m_dir, submit(fmt::format("echo start >> {0}; touch {1}; sleep "
                                                         "30; echo end >> {0}\n",
                                                         log(), marker.string())));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    ASSERT_TRUE(eventually([&] { return fs::exists(marker); }));
    first.signal(SIGKILL);
    first.wait();
    // Its job was cut off with it (by its run's guard); a new worker finds it back at the
    // front and runs it.
    fs::remove(marker);
    ASSERT_TRUE(eventually([&] { return queue_status()["queued"] == 1; }));
    const auto status = queue_status();
    EXPECT_EQ(status["next"][0]["returned"], 1);
    start_worker("0");
    ASSERT_TRUE(eventually([&] { return fs::exists(marker); }));
    EXPECT_EQ(logged()["start"], 2);
    EXPECT_EQ(queue_status()["running"].size(), 1u);
}

// A killed worker's job that holds on after SIGTERM still runs until SIGKILL --kill-after
// later: the worker counts as present until then (its guard holds its socket), so no other
// worker starts the job while its first run lives.
TEST_F(SqliteQueue, AKilledWorkersJobIsNotStartedAgainWhileItsFirstRunLives)
{
    auto& first = start_worker("0", {"--kill-after", "2s"});
    ASSERT_EQ(run(m_dir, submit(fmt::format("trap '' TERM; echo $$ >> {0}; while :; do sleep "
                                            "0.1; done\n",
                                            log())))
                  .exit_status,
              0);
    ASSERT_TRUE(eventually([&] { return logged().size() == 1; }));
    const auto first_run = std::stoi(logged().begin()->first);
    start_worker("1", {"--kill-after", "1s"}); // free, and looking at the queue every second
    first.signal(SIGKILL);
    first.wait();
    ASSERT_TRUE(eventually([&] { return logged().size() == 2; }, 30s));
    EXPECT_FALSE(process_alive(first_run)) << "started again while its first run lived";
}

// The worker a submit starts outlives it (a session of its own): stopped here as a user would.
void stop_started_worker(pid_t pid)
{
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    int status = 0;
    // An orphan comes back to this test, a subreaper (adopt_orphans).
    ASSERT_TRUE(eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 30s));
}

TEST_F(SqliteQueue, TheFirstSubmitStartsAWorkerWhenNoneServesTheQueue)
{
    TempDir state;
    const auto submit_started = [&](const std::string& commands) {
        LaunchOptions options{{"submit", "--db", db(), "--wait"}, commands};
        options.env["CUDA_VISIBLE_DEVICES"] = "3";
        options.env["XDG_STATE_HOME"] = state.path().string();
        return run(m_dir, options);
    };
    const auto first = submit_started(fmt::format("echo $CUDA_VISIBLE_DEVICES >> {}\n", log()));
    EXPECT_EQ(first.exit_status, 0) << first.err;
    EXPECT_NE(first.err.find("started a worker for queue default"), std::string::npos)
        << first.err;
    // On the GPUs a run would use: CUDA_VISIBLE_DEVICES.
    EXPECT_EQ(read_file(m_dir / "log"), "3\n");
    const auto status = queue_status();
    ASSERT_EQ(status["workers"].size(), 1u);
    EXPECT_EQ(status["workers"][0]["gpus"], nlohmann::json::array({"3"}));
    const auto worker_log = state / "gpusched/worker-default.log";
    EXPECT_NE(read_file(worker_log).find("job 1 started on GPU 3"), std::string::npos);

    // The next submit finds it serving the queue and starts no other.
    const auto second = submit_started("true\n");
    EXPECT_EQ(second.exit_status, 0) << second.err;
    EXPECT_EQ(second.err.find("started a worker"), std::string::npos) << second.err;
    EXPECT_EQ(queue_status()["workers"].size(), 1u);
    stop_started_worker(status["workers"][0]["pid"].get<pid_t>());
}

TEST_F(SqliteQueue, AWorkerThatCannotStartIsNamedWithItsLogAndTheJobsWait)
{
    TempDir state;
    LaunchOptions options{{"submit", "--db", db()}, "true\n"};
    options.env["CUDA_VISIBLE_DEVICES"] = "-1"; // no GPU: the worker ends at once
    options.env["XDG_STATE_HOME"] = state.path().string();
    const auto result = run(m_dir, options);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("ended at once"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("worker-default.log"), std::string::npos) << result.err;
    EXPECT_EQ(queue_status()["queued"], 1);
}

TEST_F(SqliteQueue, NoStartStartsNoWorker)
{
    LaunchOptions options{{"submit", "--db", db(), "--no-start"}, "true\n"};
    options.env["CUDA_VISIBLE_DEVICES"] = "0";
    ASSERT_EQ(run(m_dir, options).exit_status, 0);
    EXPECT_TRUE(queue_status()["workers"].empty());
    EXPECT_EQ(queue_status()["queued"], 1);
}

// The commands of the queue, in the order they run, read from the database itself (a
// listing shows at most 100,000).
std::vector<std::string> queued_commands(const std::string& db)
{
    sqlite3* handle = nullptr;
    std::vector<std::string> commands;
    EXPECT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* query = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(handle,
                                 "SELECT command FROM jobs WHERE state = 'queued' "
                                 "ORDER BY priority DESC, position",
                                 -1, &query, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(handle);
    while (query != nullptr && sqlite3_step(query) == SQLITE_ROW) {
        commands.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(query, 0)));
    }
    sqlite3_finalize(query);
    sqlite3_close(handle);
    return commands;
}

// A submitter killed while it writes (SIGKILL, an out-of-memory kill), at a moment of its
// own: what it queued is a beginning of its input, whole, in order and once.
TEST_F(SqliteQueue, AKilledSubmitterLeavesABeginningOfItsInputQueuedOnce)
{
    constexpr int k_lines = 400'000;
    const auto input = m_dir / "commands";
    {
        std::ofstream out(input);
        for (int i = 1; i <= k_lines; ++i) {
            out << "echo " << i << '\n';
        }
    }
    LaunchOptions options{{"submit", "--db", db(), "--no-start", "-q"}};
    options.stdin_path = input;
    Process submitter(m_dir, options);
    // Killed as soon as some are queued, in the middle of the rest.
    const bool some_queued = eventually(
        [&] { return std::filesystem::exists(db()) && queue_status()["queued"] > 0; }, 60s);
    submitter.signal(SIGKILL);
    submitter.wait();
    ASSERT_TRUE(some_queued);
    const auto commands = queued_commands(db());
    EXPECT_LT(commands.size(), static_cast<std::size_t>(k_lines)) << "killed too late";
    for (std::size_t i = 0; i < commands.size(); ++i) {
        ASSERT_EQ(commands[i], fmt::format("echo {}", i + 1));
    }
}

// A live producer writing into a FIFO: what it wrote is queued at once, not when a chunk is
// full; a command it stopped writing halfway is not queued, neither when the submitter waits
// for the rest nor when it is killed then.
TEST_F(SqliteQueue, AProducersCommandsAreQueuedAsTheyComeAndAHalfWrittenOneIsNot)
{
    const auto fifo = m_dir / "commands";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    // Opened read-write: the open does not wait for the submitter, nor the submitter's for it.
    const int writer = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    LaunchOptions options{{"submit", "--db", db(), "--no-start", "-q"}};
    options.stdin_path = fifo;
    Process submitter(m_dir, options);
    std::string commands;
    for (int i = 1; i <= 100; ++i) {
        commands += fmt::format("echo {}\n", i);
    }
    commands += "echo half"; // a producer stopped in the middle of a line
    ASSERT_EQ(write(writer, commands.data(), commands.size()),
              static_cast<ssize_t>(commands.size())); // far less than a pipe holds
    EXPECT_TRUE(eventually([&] {
        return std::filesystem::exists(db()) && queue_status()["queued"] == 100;
    }));
    EXPECT_TRUE(submitter.running()); // waiting for the rest of the line
    submitter.signal(SIGKILL);
    submitter.wait();
    close(writer);
    const auto queued = queued_commands(db());
    ASSERT_EQ(queued.size(), 100u);
    for (std::size_t i = 0; i < queued.size(); ++i) {
        ASSERT_EQ(queued[i], fmt::format("echo {}", i + 1));
    }
}

// A listing with too few descriptors to read the table of sockets cannot tell which workers
// are present: it must not take a running worker for gone and send its job to be run again.
// Every limit from too few to open the database to plenty is tried.
TEST_F(SqliteQueue, AListingShortOfDescriptorsReturnsNoRunningJob)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    start_worker("0");
    ASSERT_EQ(run(m_dir, submit(fmt::format("echo run >> {}; sleep 60\n", log()))).exit_status,
              0);
    ASSERT_TRUE(eventually([&] { return logged()["run"] == 1; }));
    for (int limit = 4; limit <= 24; ++limit) {
        TempDir dir;
        LaunchOptions options{{"-c", fmt::format("ulimit -n {}; exec {} queue --db {}", limit,
                                                 binary().string(), db())}};
        options.program = "/bin/sh";
        run(dir, options);
    }
    const auto status = queue_status();
    ASSERT_EQ(status["running"].size(), 1u) << status.dump();
    EXPECT_EQ(status["running"][0]["returned"], 0) << status.dump();
    EXPECT_EQ(status["queued"], 0);
    std::this_thread::sleep_for(1500ms); // a tick of the worker: a job returned would start
    EXPECT_EQ(logged()["run"], 1);
}

// A worker short of descriptors (ulimit -n) starts what it can and the rest as jobs end:
// none of the queue's jobs is failed for it, none is lost, none runs twice.
TEST_F(SqliteQueue, AWorkerShortOfDescriptorsDelaysJobsAndFailsNone)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    constexpr int k_jobs = 30;
    ASSERT_EQ(run(m_dir, submit(logging_commands(k_jobs, "sleep 0.2; "))).exit_status, 0);
    TempDir worker_dir;
    LaunchOptions options{{"-c", fmt::format("ulimit -n 24; exec {} worker --db {} --gpus 0-7 "
                                             "--jobs-per-gpu 2",
                                             binary().string(), db())}};
    options.program = "/bin/sh";
    Process worker(worker_dir, options);
    const bool drained = eventually([&] { return queue_status()["succeeded"] == k_jobs; }, 60s);
    worker.signal(SIGTERM);
    const auto result = worker.wait();
    ASSERT_TRUE(drained) << result.err;
    EXPECT_NE(result.err.find("ulimit -n"), std::string::npos) << "the limit must bite: " << result.err;
    const auto counts = logged();
    EXPECT_EQ(counts.size(), static_cast<std::size_t>(k_jobs));
    for (const auto& [line, count] : counts) {
        EXPECT_EQ(count, 1) << line;
    }
}

// A submit short of descriptors says so and queues nothing, rather than part of its input.
TEST_F(SqliteQueue, ASubmitShortOfDescriptorsIsAClearErrorAndQueuesNothing)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    TempDir dir;
    LaunchOptions options{{"-c", fmt::format("ulimit -n 5; exec {} submit --no-start --db {}",
                                             binary().string(), db())},
                          logging_commands(3)};
    options.program = "/bin/sh";
    const auto result = run(dir, options);
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_NE(result.err.find("Too many open files"), std::string::npos) << result.err;
    EXPECT_EQ(queue_status()["queued"], 0);
}

// Another process holding the database's write lock (stopped with SIGSTOP inside a write, say):
// the commands give up after a few seconds with an error that says so and change nothing; the
// worker, which waits a moment at a time, goes on and records its results once it can.
TEST_F(SqliteQueue, AWriteLockHeldElsewhereIsAClearErrorAndHangsNothing)
{
    start_worker("0");
    ASSERT_EQ(run(m_dir, submit(fmt::format("echo 1 >> {}\n", log()), {"--wait"})).exit_status,
              0);
    sqlite3* holder = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &holder), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    // Both at once: each waits out its own time for the lock.
    const TempDir cancel_dir;
    const TempDir submit_dir;
    Process cancelling(cancel_dir, {{"cancel", "--db", db(), "1"}});
    Process submitting(submit_dir, submit("true\n"));
    const auto refused = cancelling.wait();
    EXPECT_EQ(refused.exit_status, 255);
    EXPECT_NE(refused.err.find("another process holds its write lock"), std::string::npos)
        << refused.err;
    const auto submitted = submitting.wait();
    EXPECT_EQ(submitted.exit_status, 255);
    EXPECT_NE(submitted.err.find("another process holds its write lock"), std::string::npos)
        << submitted.err;
    EXPECT_EQ(queue_status()["queued"], 0) << "a reader never waits for the lock";
    sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    const auto after = run(m_dir, submit(fmt::format("echo 2 >> {}\n", log()), {"--wait"}));
    EXPECT_EQ(after.exit_status, 0) << after.err;
    EXPECT_EQ(read_file(m_dir / "log"), "1\n2\n");
}

// While another process holds the write lock, the worker's reads still work: they must not be
// taken for the end of the spell, or the log flips between the error and its end every second.
TEST_F(SqliteQueue, AWriteLockHeldWhileAResultWaitsIsSaidOnceAndItsEndOnce)
{
    const auto go = m_dir / "go";
    const auto job = fmt::format("while [ ! -e {} ]; do sleep 0.02; done", go.string());
    ASSERT_EQ(run(m_dir, submit(job + "\n")).exit_status, 0);
    Process worker(m_dir, {{"worker", "--db", db(), "--gpus", "0", "-v"}});
    ASSERT_TRUE(eventually([&] { return queue_status()["running"].size() == 1; }));
    sqlite3* holder = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &holder), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    write_file(go, "");
    // Evidence of three tries at the result, each a second apart, with the worker's looks
    // at the queue (reads) between them.
    ASSERT_TRUE(eventually([&] {
        return count_lines_with(worker.err_so_far(), "recording results: ") >= 3;
    })) << worker.err_so_far();
    EXPECT_EQ(count_lines_with(worker.err_so_far(), "works again"), 0u) << worker.err_so_far();
    sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    ASSERT_TRUE(eventually([&] { return queue_status()["succeeded"] == 1; }));
    worker.signal(SIGTERM);
    const auto stopped = worker.wait();
    EXPECT_EQ(count_lines_with(stopped.err, "; trying again every"), 1u) << stopped.err;
    EXPECT_EQ(count_lines_with(stopped.err, "the database works again, after "), 1u) << stopped.err;
}

TEST_F(SqliteQueue, AFileThatIsNotADatabaseIsAClearErrorAndIsLeftAlone)
{
    const std::string garbage(10000, 'x');
    write_file(db(), garbage);
    const auto result = run(m_dir, submit("true\n"));
    EXPECT_NE(result.exit_status, 0);
    EXPECT_NE(result.err.find(db()), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("not a database"), std::string::npos) << result.err;
    EXPECT_EQ(read_file(db()), garbage);
}

TEST_F(SqliteQueue, AReadOnlyDatabaseIsAClearErrorAndKeepsItsJobs)
{
    if (geteuid() == 0) {
        // Root writes through permissions: take them from another user.
        const auto user = second_user();
        if (!user) {
            GTEST_SKIP() << "no second account";
        }
        ASSERT_EQ(run(m_dir, submit("true\n")).exit_status, 0);
        open_to_everyone(m_dir.path());
        chmod(db().c_str(), 0644);
        const auto result = run(m_dir, as_user(*user, submit("false\n")));
        EXPECT_NE(result.exit_status, 0);
        EXPECT_NE(result.err.find(db()), std::string::npos) << result.err;
        EXPECT_EQ(queue_status()["queued"], 1);
        return;
    }
    ASSERT_EQ(run(m_dir, submit("true\n")).exit_status, 0);
    chmod(db().c_str(), 0444);
    const auto result = run(m_dir, submit("false\n"));
    EXPECT_NE(result.exit_status, 0);
    EXPECT_NE(result.err.find(db()), std::string::npos) << result.err;
}

TEST_F(SqliteQueue, AFullDiskIsAClearErrorAndWhatWasQueuedStays)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "mounting a small tmpfs needs root";
    }
    TempDir mount_point;
    // Its root ours alone: a database in a directory others can write is refused.
    ASSERT_EQ(mount("tmpfs", mount_point.path().c_str(), "tmpfs", 0, "size=256k,mode=0700"), 0)
        << std::strerror(errno);
    const auto small_db = (mount_point / "queue.db").string();
    const auto in_small = [&](const std::string& commands) {
        return LaunchOptions{{"submit", "--db", small_db, "--no-start"}, commands};
    };
    ASSERT_EQ(run(m_dir, in_small("echo kept\n")).exit_status, 0);
    // Commands far larger than the disk: the transaction fails whole.
    std::string huge;
    for (int i = 0; i < 2000; ++i) {
        huge += fmt::format("echo {} {}\n", i, std::string(200, 'y'));
    }
    const auto full = run(m_dir, in_small(huge));
    EXPECT_NE(full.exit_status, 0);
    EXPECT_NE(full.err.find("full"), std::string::npos) << full.err;
    EXPECT_NE(full.err.find(small_db), std::string::npos) << full.err;
    const auto listed = run(m_dir, {{"queue", "--db", small_db, "--json"}});
    EXPECT_EQ(listed.exit_status, 0) << listed.err;
    if (listed.exit_status == 0) {
        EXPECT_EQ(nlohmann::json::parse(listed.out)["queued"], 1);
    }
    umount2(mount_point.path().c_str(), MNT_DETACH);
}

// A job that succeeded while the disk was full: its result waits in the worker, even past a
// stop, until it can be written; it is never dropped for the job to run again.
TEST_F(SqliteQueue, AResultAFullDiskKeepsOutWaitsUntilItCanBeWritten)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "mounting a small tmpfs needs root";
    }
    TempDir mount_point;
    ASSERT_EQ(mount("tmpfs", mount_point.path().c_str(), "tmpfs", 0, "size=2m,mode=0700"), 0)
        << std::strerror(errno);
    const auto small_db = (mount_point / "queue.db").string();
    const auto go = m_dir / "go";
    const auto runs = m_dir / "runs";
    const auto job = fmt::format("echo ran >> {}; while [ ! -e {} ]; do sleep 0.02; done", runs.string(),
                                 go.string());
    ASSERT_EQ(run(m_dir, {{"submit", "--db", small_db, "--no-start"}, job + "\n"}).exit_status, 0);
    Process worker(m_dir, {{"worker", "--db", small_db, "--gpus", "0", "--output-dir",
                            (m_dir / "output").string()}});
    ASSERT_TRUE(eventually([&] { return fs::exists(runs); }));
    // The disk fills up while the job runs.
    const auto filler = (mount_point / "filler").string();
    (void)!std::system(fmt::format("dd if=/dev/zero of={} bs=4k 2>/dev/null", filler).c_str());
    write_file(go, "");
    ASSERT_TRUE(eventually([&] { return worker.err_so_far().find("full") != std::string::npos; }))
        << worker.err_so_far();
    worker.signal(SIGTERM);
    ASSERT_TRUE(eventually([&] {
        return worker.err_so_far().find("waits until it can") != std::string::npos;
    })) << worker.err_so_far();
    EXPECT_TRUE(worker.running()) << "gave up on the result";
    fs::remove(filler);
    const auto stopped = worker.wait(30s);
    EXPECT_FALSE(stopped.timed_out);
    const auto listed = run(m_dir, {{"queue", "--db", small_db, "--json"}});
    ASSERT_EQ(listed.exit_status, 0) << listed.err;
    const auto status = nlohmann::json::parse(listed.out);
    EXPECT_EQ(status["succeeded"], 1) << status;
    EXPECT_EQ(status["queued"], 0) << "the job went back to run again";
    EXPECT_EQ(read_file(runs), "ran\n");
    umount2(mount_point.path().c_str(), MNT_DETACH);
}

// A worker in another network namespace binds its presence where this one cannot see it: it
// is not taken for gone, and its running job is not run again elsewhere meanwhile.
TEST_F(SqliteQueue, AWorkerInAnotherNetworkNamespaceIsNotTakenForGone)
{
    if (geteuid() != 0 || !fs::exists("/usr/bin/unshare")) {
        GTEST_SKIP() << "a network namespace of its own needs root and unshare";
    }
    const auto runs = m_dir / "runs";
    const auto go = m_dir / "go";
    ASSERT_EQ(run(m_dir, submit(fmt::format("echo ran >> {}; while [ ! -e {} ]; do sleep 0.02; "
                                            "done\n",
                                            runs.string(), go.string())))
                  .exit_status,
              0);
    auto options = command("worker", {"--gpus", "0"});
    options.args.insert(options.args.begin(), {"-n", "--", binary().string()});
    options.program = "/usr/bin/unshare";
    TempDir elsewhere;
    Process hidden(elsewhere, options);
    ASSERT_TRUE(eventually([&] { return fs::exists(runs); })) << hidden.err_so_far();
    // Listings and a second worker here look for gone workers and return their jobs.
    EXPECT_EQ(queue_status()["running"].size(), 1u);
    start_worker("1");
    ASSERT_TRUE(eventually([&] { return queue_status()["workers"].size() == 2; }));
    EXPECT_EQ(queue_status()["running"].size(), 1u) << "taken for gone, its job went back";
    write_file(go, "");
    ASSERT_TRUE(eventually([&] { return queue_status()["succeeded"] == 1; }));
    EXPECT_EQ(read_file(runs), "ran\n") << "run twice";
    hidden.signal(SIGTERM);
    hidden.wait();
}

// The database removed under a running worker (`rm queue.db`), and a new one made by the next
// submit: the new one starts empty (the old one's -wal is not taken for its own), and the
// worker notices and stops, saying why, rather than serve a file nobody else sees.
TEST_F(SqliteQueue, ADatabaseRemovedUnderAWorkerIsNoticedAndNothingRunsAgain)
{
    auto& worker = start_worker("0");
    ASSERT_EQ(run(m_dir, submit(logging_commands(3), {"--wait"})).exit_status, 0);
    fs::remove(db());
    ASSERT_EQ(run(m_dir, submit("echo new >> " + log() + "\n")).exit_status, 0);
    const auto stopped = worker.wait(30s);
    EXPECT_FALSE(stopped.timed_out);
    EXPECT_NE(stopped.err.find("while this worker ran: stopping"), std::string::npos)
        << stopped.err;
    start_worker("0");
    ASSERT_TRUE(eventually([&] { return logged()["new"] == 1; }));
    EXPECT_EQ(read_file(log()), "1\n2\n3\nnew\n");
    const auto status = queue_status();
    EXPECT_EQ(status["succeeded"], 1) << status;
}

} // namespace
} // namespace gpusched::testing
