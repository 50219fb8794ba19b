// The Redis-backed queue against a real redis-server: submitters and workers as separate
// processes, workers killed, Redis restarted, forged jobs refused.
#include "harness.hpp"
#include "redis_server.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <map>
#include <memory>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class Queue : public ::testing::Test {
protected:
    void SetUp() override { adopt_orphans(); }

    // A worker with its own directory (its stdout, stderr and lock directory).
    Process& start_worker(const std::string& gpus, std::vector<std::string> extra = {})
    {
        m_worker_dirs.push_back(std::make_unique<TempDir>());
        std::vector<std::string> args = {"worker", "--redis", m_redis.url(), "--gpus", gpus};
        args.insert(args.end(), extra.begin(), extra.end());
        m_workers.push_back(std::make_unique<Process>(*m_worker_dirs.back(), LaunchOptions{args}));
        return *m_workers.back();
    }

    LaunchOptions submit(const std::string& commands, std::vector<std::string> extra = {}) const
    {
        std::vector<std::string> args = {"submit", "--redis", m_redis.url()};
        args.insert(args.end(), extra.begin(), extra.end());
        return {args, commands};
    }

    nlohmann::json queue_status() const
    {
        TempDir dir;
        const auto result = run(dir, {{"queue", "--redis", m_redis.url(), "--json"}});
        EXPECT_EQ(result.exit_status, 0) << result.err;
        return nlohmann::json::parse(result.out);
    }

    // Lines of the shared log jobs write, counted.
    std::map<std::string, int> logged() const
    {
        std::map<std::string, int> counts;
        for (const auto& line : split_lines(read_file(m_dir / "log"))) {
            ++counts[line];
        }
        return counts;
    }

    std::string log() const { return (m_dir / "log").string(); }

    void stop_workers()
    {
        for (auto& worker : m_workers) {
            if (!worker->running()) {
                continue;
            }
            worker->signal(SIGUSR1);
            const auto finished = worker->wait(30s);
            EXPECT_FALSE(finished.timed_out);
        }
    }

    RedisServer m_redis;
    TempDir m_dir;
    std::vector<std::unique_ptr<TempDir>> m_worker_dirs;
    std::vector<std::unique_ptr<Process>> m_workers;
};

TEST_F(Queue, SubmitWaitsForTheOutcomesAndExitsAsARunWould)
{
    start_worker("GPU-a0,GPU-a1");
    const auto result =
        run(m_dir, submit(join_lines({"echo ok >> " + log(), "exit 3", "true"}), {"--wait"}));
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("job 2 (queue job 2) failed on"), std::string::npos) << result.err;
    // The worker logs the job under its queue id.
    EXPECT_TRUE(eventually([&] {
        return read_file(*m_worker_dirs.back() / "gpusched.err").find("job 2 failed on GPU") !=
               std::string::npos;
    }));
    EXPECT_NE(result.err.find("exit 3"), std::string::npos) << result.err;
    EXPECT_EQ(logged()["ok"], 1);
    const auto status = queue_status();
    EXPECT_EQ(status["succeeded"], 2);
    EXPECT_EQ(status["failed"], 1);
    EXPECT_EQ(status["queued"], 0);
    std::vector<std::string> failed;
    for (const auto& job : status["recent"]) {
        if (job["state"] == "failed") {
            failed.push_back(job["command"]);
        }
    }
    EXPECT_EQ(failed, std::vector<std::string>{"exit 3"});
    stop_workers();
}

TEST_F(Queue, ThreeWorkersRunEachOfAThousandJobsOnce)
{
    for (const auto* gpus :
         {"GPU-a0,GPU-a1,GPU-a2", "GPU-b0,GPU-b1,GPU-b2", "GPU-c0,GPU-c1,GPU-c2"}) {
        start_worker(gpus, {"-q"});
    }
    std::vector<std::string> jobs;
    for (int i = 1; i <= 1000; ++i) {
        jobs.push_back(fmt::format("echo job-{} $CUDA_VISIBLE_DEVICES >> {}", i, log()));
    }
    const auto result = run(m_dir, submit(join_lines(jobs), {"--wait", "-q"}), 120s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    std::map<std::string, int> per_job;
    std::map<char, int> per_worker;
    for (const auto& line : split_lines(read_file(m_dir / "log"))) {
        const auto space = line.find(' ');
        ++per_job[line.substr(0, space)];
        ++per_worker[line.at(space + 5)]; // the worker's letter in GPU-a0
    }
    ASSERT_EQ(per_job.size(), 1000u);
    for (const auto& [job, runs] : per_job) {
        EXPECT_EQ(runs, 1) << job;
    }
    EXPECT_EQ(per_worker.size(), 3u) << "every worker took part";
    stop_workers();
}

TEST_F(Queue, AKilledWorkersJobRunsAgainElsewhereAndNothingRunsTwice)
{
    auto& doomed = start_worker("GPU-a0", {"--lease-timeout", "1"});
    std::vector<std::string> jobs;
    for (int i = 1; i <= 4; ++i) {
        jobs.push_back(fmt::format("echo start-{} $$ $CUDA_VISIBLE_DEVICES >> {}; sleep 0.5; "
                                   "echo end-{} $CUDA_VISIBLE_DEVICES >> {}",
                                   i, log(), i, log()));
    }
    Process submitter(m_dir, submit(join_lines(jobs), {"--wait"}));
    ASSERT_TRUE(
        eventually([&] { return read_file(m_dir / "log").find("start-1") != std::string::npos; }));
    doomed.signal(SIGKILL);
    doomed.wait();
    // Its job would run on as an orphan; kill it too, as a crashed host would.
    const auto first = split_lines(read_file(m_dir / "log")).front();
    kill(std::stoi(first.substr(first.find(' ') + 1)), SIGKILL);

    start_worker("GPU-b0", {"--lease-timeout", "1"});
    const auto result = submitter.wait(60s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto counts = logged();
    for (int i = 1; i <= 4; ++i) {
        EXPECT_EQ(counts[fmt::format("end-{} GPU-b0", i)], 1) << read_file(m_dir / "log");
    }
    EXPECT_EQ(counts.count("end-1 GPU-a0"), 0u) << "the killed worker's job never finished";
    stop_workers();
}

TEST_F(Queue, ARunSurvivesARedisRestart)
{
    start_worker("GPU-a0,GPU-a1");
    std::vector<std::string> jobs;
    for (int i = 1; i <= 40; ++i) {
        jobs.push_back(fmt::format("sleep 0.05; echo job-{} >> {}", i, log()));
    }
    Process submitter(m_dir, submit(join_lines(jobs), {"--wait"}));
    ASSERT_TRUE(eventually([&] { return logged().size() >= 8; }));
    m_redis.stop();
    std::this_thread::sleep_for(500ms);
    m_redis.start();
    const auto result = submitter.wait(60s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    const auto counts = logged();
    EXPECT_EQ(counts.size(), 40u);
    for (const auto& [job, runs] : counts) {
        EXPECT_EQ(runs, 1) << job;
    }
    stop_workers();
}

TEST_F(Queue, AWorkerWithAKeyRefusesJobsNotSignedWithIt)
{
    write_file(m_dir / "key", "the right secret\n");
    write_file(m_dir / "other", "another secret\n");
    start_worker("GPU-a0", {"--key-file", (m_dir / "key").string()});
    const auto forged = run(m_dir, submit("touch " + (m_dir / "forged").string() + "\n",
                                          {"--wait", "--key-file", (m_dir / "other").string()}));
    EXPECT_EQ(forged.exit_status, 1);
    EXPECT_NE(forged.err.find("refused"), std::string::npos) << forged.err;
    const auto unsigned_job =
        run(m_dir, submit("touch " + (m_dir / "unsigned").string() + "\n", {"--wait"}));
    EXPECT_EQ(unsigned_job.exit_status, 1);
    const auto good = run(m_dir, submit("touch " + (m_dir / "signed").string() + "\n",
                                        {"--wait", "--key-file", (m_dir / "key").string()}));
    EXPECT_EQ(good.exit_status, 0) << good.err;
    EXPECT_FALSE(fs::exists(m_dir / "forged"));
    EXPECT_FALSE(fs::exists(m_dir / "unsigned"));
    EXPECT_TRUE(fs::exists(m_dir / "signed"));
    EXPECT_EQ(queue_status()["refused"], 2);
    stop_workers();
}

TEST_F(Queue, AWorkerStoppedWithTermReturnsItsJob)
{
    auto& worker = start_worker("GPU-a0");
    const auto submitted = run(m_dir, submit("echo started >> " + log() + "; sleep 30\n"));
    EXPECT_EQ(submitted.exit_status, 0) << submitted.err;
    ASSERT_TRUE(eventually([&] { return logged().count("started") == 1; }));
    worker.signal(SIGTERM);
    const auto stopped = worker.wait(20s);
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    const auto status = queue_status();
    EXPECT_EQ(status["queued"], 1) << "back in the queue for another worker";
    EXPECT_EQ(status["failed"], 0);
}

// A Redis queue keeps the last 64 KiB of each stream of a job (the local queue keeps its
// files whole, which the tests of both backends cover).
TEST_F(Queue, LogsOfALongOutputShowItsLast64KiBAndSaySo)
{
    start_worker("0");
    const auto submitted =
        run(m_dir, submit("head -c 100000 /dev/zero | tr '\\0' a; echo; echo end; echo e >&2\n",
                          {"--wait"}));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    const auto id = queue_status()["recent"].at(0)["id"].get<long long>();
    const auto logs = run(m_dir, {{"logs", "--redis", m_redis.url(), std::to_string(id)}});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(logs.out.size(), 64u * 1024);
    EXPECT_TRUE(logs.out.ends_with("aaa\nend\n"));
    EXPECT_NE(logs.err.find("e\n"), std::string::npos) << logs.err;
    EXPECT_NE(logs.err.find("only the last 64 KiB"), std::string::npos) << logs.err;
    stop_workers();
}

// A worker's own output directory is a way station: once a result (with its output's tail)
// is in Redis, the files of every attempt of the job go, not the last one's only.
TEST_F(Queue, AWorkerKeepsNoOutputOfAJobWhoseResultIsSent)
{
    const auto state = m_dir / "state";
    m_worker_dirs.push_back(std::make_unique<TempDir>());
    LaunchOptions options{{"worker", "--redis", m_redis.url(), "--gpus", "0", "--retries", "2"}};
    options.env["XDG_STATE_HOME"] = state.string();
    m_workers.push_back(std::make_unique<Process>(*m_worker_dirs.back(), options));
    const auto submitted = run(m_dir, submit("echo try; echo failed >&2; exit 3\n", {"--wait"}));
    EXPECT_EQ(submitted.exit_status, 1) << submitted.err;
    const auto id = queue_status()["recent"].at(0)["id"].get<long long>();
    const auto logs = run(m_dir, {{"logs", "--redis", m_redis.url(), std::to_string(id)}});
    EXPECT_EQ(logs.out, "try\n") << "the last attempt's output, from Redis";
    EXPECT_NE(m_workers.back()->err_so_far().find("attempt 3"), std::string::npos)
        << "tried three times";
    std::vector<std::string> left;
    for (const auto& entry : fs::recursive_directory_iterator(state / "gpusched" / "output")) {
        if (entry.is_regular_file()) {
            left.push_back(entry.path().string());
        }
    }
    EXPECT_TRUE(left.empty()) << left.size() << " files left, the first " << left.front();
    stop_workers();
}

TEST(QueueLogin, ThePasswordComesFromTheUrlOrRediscliAuth)
{
    RedisServer redis(std::string("s3cret"));
    TempDir dir;
    const auto url = fmt::format("redis://127.0.0.1:{}", redis.port());
    const auto wrong =
        run(dir, {{"queue", "--redis", fmt::format("redis://:nope@127.0.0.1:{}", redis.port())}});
    EXPECT_EQ(wrong.exit_status, 255);
    EXPECT_NE(wrong.err.find("WRONGPASS"), std::string::npos) << wrong.err;
    const auto in_url =
        run(dir, {{"queue", "--redis", fmt::format("redis://:s3cret@127.0.0.1:{}", redis.port())}});
    EXPECT_EQ(in_url.exit_status, 0) << in_url.err;
    const auto from_env =
        run(dir, {{"queue", "--redis", url}, {}, {}, {{"REDISCLI_AUTH", "s3cret"}}});
    EXPECT_EQ(from_env.exit_status, 0) << from_env.err;
    EXPECT_NE(from_env.out.find("queued    0"), std::string::npos) << from_env.out;
}

TEST_F(Queue, BadQueueArgumentsAreUsageErrors)
{
    EXPECT_EQ(run(m_dir, {{"submit", "--redis", "http://x"}}).exit_status, 255);
    EXPECT_EQ(run(m_dir, {{"submit", "--redis", m_redis.url(), "--queue", "a b"}}).exit_status,
              255);
    EXPECT_EQ(run(m_dir, {{"worker", "--redis", m_redis.url(), "--key-file", "/nonexistent"}})
                  .exit_status,
              255);
}

} // namespace
} // namespace gpusched::testing
