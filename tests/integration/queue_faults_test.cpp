// The Redis queue when Redis fails under it: a server killed, paused, answering errors or
// emptied, and workers killed. Each test bounds its waits, so a hang fails it, and stops every
// process it started (workers, redis-server, jobs left behind) whatever its outcome.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Beyond what the contract promises, the time a loaded machine may add before a test calls
// it a hang.
constexpr auto k_slack = 5s;

// The pid in the first line of `path` once a job has written it whole, else -1.
pid_t pid_in(const fs::path& path)
{
    const auto text = read_file(path);
    if (text.empty() || text.back() != '\n') {
        return -1;
    }
    return std::stoi(text);
}

// The last `count` lines of `text`, for a failure's message.
std::string last_lines(const std::string& text, std::size_t count = 20)
{
    const auto lines = split_lines(text);
    const auto first =
        lines.size() > count ? lines.end() - static_cast<long>(count) : lines.begin();
    return (first != lines.begin() ? "...\n" : "") + join_lines({first, lines.end()});
}

// The regular files of a spool directory that hold something.
std::vector<fs::path> spooled(const fs::path& spool)
{
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::recursive_directory_iterator it(spool, error), end; !error && it != end;
         it.increment(error)) {
        if (it->is_regular_file(error) && it->file_size(error) > 0) {
            files.push_back(it->path());
        }
    }
    return files;
}

class QueueFaults : public ::testing::Test, public QueueFixture {
protected:
    explicit QueueFaults(Persistence persistence = Persistence::every_write)
        : QueueFixture(Store::redis, persistence)
    {
    }

    // Workers are killed, not stopped: a stop with Redis away would wait for it in vain.
    ~QueueFaults() override { m_workers.clear(); }

    // Submits without waiting; the submission itself must succeed.
    void submit_now(const std::string& commands)
    {
        TempDir dir;
        const auto result = run(dir, submit(commands), 30s);
        ASSERT_EQ(result.exit_status, 0) << result.err;
    }

    // A count of `queue --json` ("succeeded", "failed", "returned"), or -1 where it is missing.
    long long counted(const std::string& field) const
    {
        const auto status = try_queue_status();
        if (!status || !status->contains(field) || !(*status)[field].is_number_integer()) {
            return -1;
        }
        return (*status)[field].get<long long>();
    }

    std::string dump_status() const
    {
        const auto status = try_queue_status();
        return status ? status->dump() : "(queue --json failed)";
    }

    std::string path(const std::string& name) const { return (m_dir / name).string(); }

    // The pid a job wrote to `name`, once it has; -1 (and the worker's stderr in the failure)
    // when the worker ended first or nothing came within 20 s.
    pid_t started_job(Process& worker, const std::string& name = "pid")
    {
        pid_t pid = -1;
        std::optional<Finished> ended;
        eventually([&] {
            pid = pid_in(m_dir / name);
            ended = pid > 0 ? std::nullopt : worker.try_wait();
            return pid > 0 || ended;
        });
        if (ended) {
            ADD_FAILURE() << "the worker ended with status " << ended->exit_status
                          << " before its job started:\n"
                          << ended->err;
        } else if (pid <= 0) {
            ADD_FAILURE() << "no job started within 20 s; the worker says:\n"
                          << worker.err_so_far();
        }
        return pid;
    }

    // Stops `worker` with `signal` after Redis died under its running job: it must end within
    // --kill-after (2 s) and some slack, with status 128 + signal, its job stopped.
    void expect_stopped_with_redis_dead(int signal)
    {
        auto& worker = start_worker("GPU-a0", {"--kill-after", "2"});
        submit_now(fmt::format("echo $$ > {}; exec sleep 30\n", path("pid")));
        const pid_t job = started_job(worker);
        ASSERT_GT(job, 0);
        redis().kill();
        worker.signal(signal);
        const auto finished = worker.wait(2s + k_slack);
        EXPECT_FALSE(finished.timed_out)
            << "signal " << signal << " did not stop the worker within --kill-after (2 s) + "
            << k_slack.count() << " s with Redis dead; it says:\n"
            << finished.err;
        if (!finished.timed_out) {
            EXPECT_EQ(finished.exit_status, 128 + signal) << finished.err;
        }
        EXPECT_TRUE(eventually([&] { return !process_alive(job); }, k_slack))
            << "the job outlived its worker";
    }

    // Resets the queue under a worker and a waiting `submit --wait` of four one-second jobs,
    // once the first has ended: both must say so, the submitter ending with status 255 and
    // naming the jobs it had not seen end.
    void expect_reset_reported(const std::function<void()>& reset)
    {
        start_worker("GPU-a0");
        std::vector<std::string> jobs;
        for (int i = 1; i <= 4; ++i) {
            jobs.push_back(
                fmt::format("echo start-{} >> {}; sleep 1; echo end-{} >> {}", i, log(), i, log()));
        }
        TempDir submit_dir;
        Process submitter(submit_dir, submit(join_lines(jobs), {"--wait"}));
        ASSERT_TRUE(eventually([&] { return logged().count("start-2") > 0; }))
            << submitter.err_so_far() << worker_err(0);
        reset();
        EXPECT_TRUE(
            eventually([&] { return worker_err(0).find("reset") != std::string::npos; }, 15s))
            << "the worker did not say that its queue was reset:\n"
            << worker_err(0);
        const auto finished = submitter.wait(15s);
        ASSERT_FALSE(finished.timed_out)
            << "submit --wait still waited 15 s after its queue was reset:\n"
            << finished.err;
        EXPECT_EQ(finished.exit_status, 255) << finished.err;
        // The jobs whose end the submitter logged, and the lines that say what was lost.
        std::set<std::string> ended;
        std::string lost;
        const std::regex outcome(R"(job (\d+)\b.*\b(finished|failed) on)");
        for (const auto& line : split_lines(finished.err)) {
            std::smatch match;
            if (std::regex_search(line, match, outcome)) {
                ended.insert(match[1]);
            } else if (line.find("lost") != std::string::npos) {
                lost += line + "\n";
            }
        }
        EXPECT_FALSE(lost.empty()) << "no line says what was lost:\n" << finished.err;
        EXPECT_LT(ended.size(), 4u) << finished.err;
        for (int i = 1; i <= 4; ++i) {
            const auto id = std::to_string(i);
            if (ended.count(id) == 0) {
                EXPECT_TRUE(std::regex_search(lost, std::regex("\\b" + id + "\\b")))
                    << "job " << id << " never ended, yet is not named lost:\n"
                    << finished.err;
            }
        }
    }

};

// A server without persistence: killed and started again, it is empty.
class VolatileQueue : public QueueFaults {
protected:
    VolatileQueue() : QueueFaults(Persistence::none) {}
};

// 1. A worker can be stopped whatever Redis does.

TEST_F(QueueFaults, SigtermStopsAWorkerWithinKillAfterWhileRedisIsDead)
{
    expect_stopped_with_redis_dead(SIGTERM);
}

TEST_F(QueueFaults, SigintStopsAWorkerWithinKillAfterWhileRedisIsDead)
{
    expect_stopped_with_redis_dead(SIGINT);
}

TEST_F(QueueFaults, AJobPastItsTimeoutIsStoppedWhileRedisIsPausedAndSigtermThenStopsTheWorker)
{
    auto& worker = start_worker("GPU-a0", {"--timeout", "4", "--kill-after", "2"});
    submit_now(fmt::format("echo $$ > {}; exec sleep 30\n", path("pid")));
    const pid_t job = started_job(worker);
    ASSERT_GT(job, 0);
    const auto started = Clock::now();
    redis().pause();
    // Stopped 4 s after its start, killed 2 s later if it lingers.
    EXPECT_TRUE(eventually([&] { return !process_alive(job); }, 4s + 2s + k_slack))
        << "the job ran past its --timeout while Redis was paused; the worker says:\n"
        << worker.err_so_far();
    EXPECT_GE(Clock::now() - started, 3500ms) << "the job was stopped before its --timeout";

    worker.signal(SIGTERM);
    const auto finished = worker.wait(2s + k_slack);
    EXPECT_FALSE(finished.timed_out)
        << "SIGTERM did not stop the worker with Redis paused; it says:\n"
        << finished.err;
    if (!finished.timed_out) {
        EXPECT_EQ(finished.exit_status, 143) << finished.err;
    }
}

// 1. Results that could not be sent are spooled, and sent by a later worker.

TEST_F(QueueFaults, AResultSpooledWhileRedisWasPausedIsSentByTheNextWorkerAndTheJobDoesNotRunAgain)
{
    const auto spool = path("spool");
    auto& worker = start_worker("GPU-a0", {"--lease-timeout", "3", "--spool", spool});
    submit_now(fmt::format("echo start >> {0}; echo $$ > {1}; while [ ! -e {2} ]; do sleep 0.05; "
                           "done; echo ran >> {0}\n",
                           log(), path("pid"), path("go")));
    const pid_t job = started_job(worker);
    ASSERT_GT(job, 0);
    redis().pause();
    write_file(m_dir / "go", "");
    ASSERT_TRUE(eventually([&] { return !process_alive(job); }));
    EXPECT_TRUE(eventually([&] { return !spooled(spool).empty(); }))
        << "the result that could not be sent was not spooled in " << spool << "; the worker "
        << "says:\n"
        << worker.err_so_far();
    worker.signal(SIGTERM);
    const auto finished = worker.wait(2s + k_slack);
    EXPECT_FALSE(finished.timed_out)
        << "SIGTERM did not stop an idle worker with Redis paused; it says:\n"
        << finished.err;
    if (!finished.timed_out) {
        EXPECT_EQ(finished.exit_status, 143) << finished.err;
    }

    redis().resume();
    start_worker("GPU-b0", {"--lease-timeout", "3", "--spool", spool});
    EXPECT_TRUE(eventually([&] { return counted("succeeded") == 1; }))
        << "the spooled result never reached the queue: " << dump_status() << "\n"
        << worker_err(1);
    EXPECT_EQ(counted("failed"), 0);
    // Were the job given to a worker again, it would run at once: the lease (3 s) is long over.
    EXPECT_FALSE(eventually([&] { return logged()["start"] > 1; }, 3s + k_slack))
        << "the job ran again: " << read_file(log());
    EXPECT_EQ(logged()["ran"], 1) << read_file(log());
}

TEST_F(QueueFaults, AFailureSpooledWhileRedisWasDownIsSentOnceItIsBackAndTheJobDoesNotRunAgain)
{
    const auto spool = path("spool");
    auto& worker = start_worker("GPU-a0", {"--lease-timeout", "3", "--spool", spool});
    submit_now(fmt::format("echo start >> {0}; echo $$ > {1}; while [ ! -e {2} ]; do sleep 0.05; "
                           "done; echo ran >> {0}; exit 3\n",
                           log(), path("pid"), path("go")));
    const pid_t job = started_job(worker);
    ASSERT_GT(job, 0);
    redis().kill();
    write_file(m_dir / "go", "");
    ASSERT_TRUE(eventually([&] { return !process_alive(job); }));
    EXPECT_TRUE(eventually([&] { return !spooled(spool).empty(); }))
        << "the result that could not be sent was not spooled in " << spool << "; the worker "
        << "says:\n"
        << worker.err_so_far();
    worker.signal(SIGTERM);
    const auto finished = worker.wait(2s + k_slack);
    EXPECT_FALSE(finished.timed_out)
        << "SIGTERM did not stop an idle worker with Redis dead; it says:\n"
        << finished.err;
    if (!finished.timed_out) {
        EXPECT_EQ(finished.exit_status, 143) << finished.err;
    }

    redis().start(); // with its data
    start_worker("GPU-b0", {"--lease-timeout", "3", "--spool", spool});
    EXPECT_TRUE(eventually([&] { return counted("failed") == 1; }))
        << "the spooled failure never reached the queue: " << dump_status() << "\n"
        << worker_err(1);
    EXPECT_EQ(counted("succeeded"), 0);
    EXPECT_FALSE(eventually([&] { return logged()["start"] > 1; }, 3s + k_slack))
        << "the job ran again: " << read_file(log());
    EXPECT_EQ(logged()["ran"], 1) << read_file(log());
}

// 2. Error replies are not lost connections.

TEST_F(QueueFaults, AWorkerAnsweredWithErrorsNeitherReconnectsNorLogsInALoopAndRecovers)
{
    // Heartbeats every second: writes that Redis refuses while the worker waits for jobs.
    start_worker("GPU-a0", {"--lease-timeout", "3"});
    {
        TempDir dir;
        const auto first = run(dir, submit("true\n", {"--wait"}), 30s);
        ASSERT_EQ(first.exit_status, 0) << first.err << worker_err(0);
    }
    const auto lines = [&] { return split_lines(worker_err(0)).size(); };
    const auto connections_before = redis().info("total_connections_received");
    const auto lines_before = lines();
    const auto refusals_before = redis().info("total_error_replies");
    // No memory left, and no eviction: every write is refused with an OOM error.
    ASSERT_EQ(redis().cli({"CONFIG", "GET", "maxmemory-policy"}), "maxmemory-policy\nnoeviction\n");
    ASSERT_EQ(redis().cli({"CONFIG", "SET", "maxmemory", "1"}), "OK\n");
    // What the worker does while refused, over several refusals: its heartbeats, one a
    // second, and its tries again.
    int looks = 0; // each a connection of redis-cli's, one a quarter second
    ASSERT_TRUE(eventually(
        [&] {
            if (looks++ > 0) {
                std::this_thread::sleep_for(250ms);
            }
            return redis().info("total_error_replies") - refusals_before >= 10;
        },
        30s))
        << "the worker was refused fewer than 10 times:\n"
        << last_lines(worker_err(0));
    const auto connections_after = redis().info("total_connections_received");
    const auto lines_in_outage = lines() - lines_before;
    ASSERT_EQ(redis().cli({"CONFIG", "SET", "maxmemory", "0"}), "OK\n");
    // The others were redis-cli's: the second INFO, CONFIG GET and SET, the looks above, the
    // last INFO.
    EXPECT_LE(connections_after - connections_before - 4 - looks, 5)
        << "the worker reconnected on error replies";
    EXPECT_LE(lines_in_outage, 2u) << "the worker kept logging the refusals:\n"
                                   << last_lines(worker_err(0));

    EXPECT_TRUE(eventually([&] { return lines() > lines_before + lines_in_outage; }, 15s))
        << "the worker never said that the queue works again:\n"
        << last_lines(worker_err(0));
    EXPECT_LE(lines() - lines_before, 3u) << last_lines(worker_err(0));
    TempDir dir;
    const auto after = run(dir, submit(fmt::format("echo ran >> {}\n", log()), {"--wait"}), 30s);
    EXPECT_FALSE(after.timed_out) << "a job submitted after the recovery never ran";
    EXPECT_EQ(after.exit_status, 0) << after.err << last_lines(worker_err(0));
    EXPECT_EQ(logged()["ran"], 1);
}

// 4. A queue that was reset is said so.

TEST_F(VolatileQueue, AWorkerAndAWaitingSubmitterSayTheQueueWasResetWhenRedisComesBackEmpty)
{
    expect_reset_reported([&] {
        redis().kill();
        redis().start();
    });
}

TEST_F(QueueFaults, AWorkerAndAWaitingSubmitterSayTheQueueWasResetWhenRedisIsFlushed)
{
    expect_reset_reported([&] { EXPECT_EQ(redis().cli({"FLUSHALL"}), "OK\n"); });
}

// Ids start again at 1 in a reset queue: what a worker still owes the old queue never lands
// on a new job, and a new job is never taken for one the worker ran.
TEST_F(QueueFaults, NothingOfTheQueueBeforeAResetLandsOnTheNewQueue)
{
    auto& worker = start_worker("GPU-a0");
    submit_now(fmt::format("echo old-1 >> {0}; sleep 2; echo old-end >> {0}\n", log()));
    ASSERT_TRUE(eventually([&] { return logged().contains("old-1"); })) << worker.err_so_far();
    EXPECT_EQ(redis().cli({"FLUSHALL"}), "OK\n");
    // Job 1 of the new queue, while the old job 1 still runs; then job 2, after the old one.
    TempDir dir;
    const auto result = run(dir,
                            submit(fmt::format("echo new-1 >> {0}\necho new-2 >> {0}\n", log()),
                                   {"--wait"}),
                            30s);
    EXPECT_EQ(result.exit_status, 0) << result.err << worker.err_so_far();
    auto counts = logged();
    EXPECT_EQ(counts["new-1"], 1) << read_file(m_dir / "log") << worker.err_so_far();
    EXPECT_EQ(counts["new-2"], 1) << read_file(m_dir / "log") << worker.err_so_far();
    const auto job = redis().cli({"HGET", "gpusched:{default}:job:1", "command"});
    EXPECT_NE(job.find("new-1"), std::string::npos) << job;
}

// A job whose record someone damaged: its result cannot be recorded; that is said once, and
// neither the worker nor Redis is flooded while the other jobs run.
TEST_F(QueueFaults, ADamagedJobRecordIsSaidOnceAndTheOtherJobsRun)
{
    auto& worker = start_worker("GPU-a0", {"--lease-timeout", "3"});
    submit_now(fmt::format("echo damaged >> {0}; sleep 1\n", log()));
    ASSERT_TRUE(eventually([&] { return logged().contains("damaged"); })) << worker.err_so_far();
    redis().cli({"DEL", "gpusched:{default}:job:1"});
    redis().cli({"SET", "gpusched:{default}:job:1", "not a hash"});
    const auto commands_before = redis().info("total_commands_processed");
    TempDir dir;
    const auto result = run(
        dir, submit(fmt::format("echo fine-1 >> {0}\necho fine-2 >> {0}\n", log()), {"--wait"}),
        30s);
    EXPECT_EQ(result.exit_status, 0) << result.err << worker.err_so_far();
    std::this_thread::sleep_for(4s);
    const auto commands = redis().info("total_commands_processed") - commands_before;
    const auto err = worker.err_so_far();
    EXPECT_LE(count_lines_with(err, "queue job 1"), 2u) << err;
    EXPECT_EQ(err.find("answers again"), std::string::npos) << "no trouble came and went:\n" << err;
    EXPECT_LT(commands, 300) << "Redis was flooded:\n" << err;
}

// 5. A SIGKILLed worker's job does not run on.

TEST_F(QueueFaults, AKilledWorkersJobIsStoppedAndRunsToItsEndOnceElsewhere)
{
    auto& doomed = start_worker("GPU-a0", {"--lease-timeout", "10", "--kill-after", "1"});
    TempDir submit_dir;
    Process submitter(submit_dir,
                      submit(fmt::format("echo start-1 $$ >> {0}; trap '' TERM; sleep 5; "
                                         "echo end-1 $CUDA_VISIBLE_DEVICES >> {0}\n",
                                         log()),
                             {"--wait"}));
    pid_t job = -1;
    ASSERT_TRUE(eventually([&] {
        const auto lines = split_lines(read_file(m_dir / "log"));
        if (!lines.empty()) {
            job = std::stoi(lines.front().substr(lines.front().find(' ') + 1));
        }
        return job > 0;
    })) << doomed.err_so_far();
    doomed.signal(SIGKILL);
    doomed.wait();
    // It ignores SIGTERM: only the SIGKILL that follows 1 s later ends it.
    EXPECT_TRUE(eventually([&] { return !process_alive(job); }, 1s + 3s + k_slack))
        << "the killed worker's job runs on";

    start_worker("GPU-b0", {"--lease-timeout", "10", "--kill-after", "1"});
    // The lease times out after 10 s, and the job takes 5 s.
    const auto finished = submitter.wait(10s + 5s + 3 * k_slack);
    EXPECT_FALSE(finished.timed_out) << "the job did not run again:\n"
                                     << finished.err << worker_err(1);
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    auto counts = logged();
    EXPECT_EQ(counts["end-1 GPU-b0"], 1) << read_file(m_dir / "log");
    EXPECT_EQ(counts.count("end-1 GPU-a0"), 0u)
        << "the killed worker's run went on to its end: " << read_file(m_dir / "log");
}

// 7. Each worker's own lease timeout governs its jobs.

TEST_F(QueueFaults, AKilledWorkersJobGoesBackAfterItsOwnLeaseTimeoutNotTheOtherWorkers)
{
    auto& doomed = start_worker("GPU-a0", {"--lease-timeout", "3"});
    submit_now(fmt::format("echo $$ > {}; echo start $CUDA_VISIBLE_DEVICES >> {}; sleep 60\n",
                           path("pid"), log()));
    const pid_t job = started_job(doomed);
    ASSERT_GT(job, 0);
    start_worker("GPU-b0"); // the default lease timeout, 30 s
    doomed.signal(SIGKILL);
    doomed.wait();
    // Its job would run on as an orphan; kill it too, as a crashed host would.
    kill(-job, SIGKILL);
    kill(job, SIGKILL);
    const auto running_on_b = [&] {
        const auto status = try_queue_status();
        if (!status || logged().count("start GPU-b0") == 0) {
            return false;
        }
        const auto& running = (*status)["running"];
        return running.size() == 1 && running[0]["gpus"] == nlohmann::json::array({"GPU-b0"});
    };
    EXPECT_TRUE(eventually(running_on_b, 3s + k_slack))
        << "the job of a worker with a 3 s lease was not given to another in time: "
        << dump_status() << "\n"
        << read_file(m_dir / "log");
}

TEST_F(QueueFaults, AWorkerStoppedWithSigtermGivesItsJobsBackAndTheyRunElsewhere)
{
    auto& stopped = start_worker("GPU-a0,GPU-a1");
    std::vector<std::string> jobs;
    for (int i = 1; i <= 2; ++i) {
        jobs.push_back(fmt::format("echo start-{0} $CUDA_VISIBLE_DEVICES >> {1}; [ -e {2} ] || "
                                   "sleep 60; echo end-{0} $CUDA_VISIBLE_DEVICES >> {1}",
                                   i, log(), path("go")));
    }
    TempDir submit_dir;
    Process submitter(submit_dir, submit(join_lines(jobs), {"--wait"}));
    ASSERT_TRUE(eventually([&] {
        const auto counts = logged();
        return counts.count("start-1 GPU-a0") + counts.count("start-1 GPU-a1") +
                   counts.count("start-2 GPU-a0") + counts.count("start-2 GPU-a1") ==
               2;
    })) << read_file(m_dir / "log")
        << stopped.err_so_far();
    stopped.signal(SIGTERM);
    // Its jobs get SIGTERM and end at once; --kill-after is 10 s by default.
    const auto finished = stopped.wait(10s + k_slack);
    ASSERT_FALSE(finished.timed_out) << finished.err;
    EXPECT_EQ(finished.exit_status, 143) << finished.err;
    EXPECT_TRUE(
        eventually([&] { return counted("returned") == 2 && counted("failed") == 0; }, k_slack))
        << "the queue does not count two jobs given back and none failed: " << dump_status();

    write_file(m_dir / "go", "");
    start_worker("GPU-b0,GPU-b1");
    const auto submitted = submitter.wait(30s);
    EXPECT_FALSE(submitted.timed_out) << "the jobs given back never ran again";
    EXPECT_EQ(submitted.exit_status, 0) << submitted.err;
    const auto counts = logged();
    for (int i = 1; i <= 2; ++i) {
        EXPECT_EQ(counts.count(fmt::format("end-{} GPU-b0", i)) +
                      counts.count(fmt::format("end-{} GPU-b1", i)),
                  1u)
            << read_file(m_dir / "log");
    }
    EXPECT_EQ(counted("returned"), 2);
    EXPECT_EQ(counted("failed"), 0);
    EXPECT_EQ(counted("succeeded"), 2);
}

// Slurm ending a job step, or systemd a unit, sends SIGTERM to each of its processes in turn:
// a job may die of its own before its worker hears of the stop. It is given back all the same,
// not recorded as failed: killed by SIGTERM, then its worker 20 ms later.
TEST_F(QueueFaults, AJobKilledBySigtermJustBeforeItsWorkerIsGivenBackNotFailed)
{
    auto& stopped = start_worker("GPU-a0");
    const auto pid_file = path("pid");
    TempDir submit_dir;
    Process submitter(submit_dir,
                      submit(fmt::format("[ -e {0} ] && exit 0; echo $$ > {1}; exec sleep 60",
                                         path("go"), pid_file),
                             {"--wait"}));
    ASSERT_TRUE(eventually([&] { return !read_file(pid_file).empty(); })) << stopped.err_so_far();
    ::kill(std::stoi(read_file(pid_file)), SIGTERM);
    std::this_thread::sleep_for(20ms);
    stopped.signal(SIGTERM);
    const auto finished = stopped.wait(10s + k_slack);
    ASSERT_FALSE(finished.timed_out) << finished.err;
    EXPECT_TRUE(
        eventually([&] { return counted("returned") == 1 && counted("failed") == 0; }, k_slack))
        << "the job was not given back: " << dump_status() << finished.err;

    write_file(m_dir / "go", "");
    start_worker("GPU-b0");
    const auto submitted = submitter.wait(30s);
    EXPECT_FALSE(submitted.timed_out) << "the job given back never ran again";
    EXPECT_EQ(submitted.exit_status, 0) << submitted.err;
    EXPECT_EQ(counted("succeeded"), 1);
}

} // namespace
} // namespace gpusched::testing
