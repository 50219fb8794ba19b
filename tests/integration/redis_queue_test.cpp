// What only a Redis queue does, against a real redis-server: a restart of Redis, signed jobs,
// the tails of a job's output kept with its result, logging in. What both stores do is in
// queue_test.cpp; Redis's faults in queue_faults_test.cpp.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <map>
#include <memory>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class RedisQueue : public ::testing::Test, public QueueFixture {
protected:
    RedisQueue() : QueueFixture(Store::redis, Persistence::every_write) {}
};

TEST_F(RedisQueue, ARunSurvivesARedisRestart)
{
    start_worker("GPU-a0,GPU-a1");
    std::vector<std::string> jobs;
    for (int i = 1; i <= 40; ++i) {
        jobs.push_back(fmt::format("sleep 0.05; echo job-{} >> {}", i, log()));
    }
    Process submitter(m_dir, submit(join_lines(jobs), {"--wait"}));
    ASSERT_TRUE(eventually([&] { return logged().size() >= 8; }));
    redis().stop();
    std::this_thread::sleep_for(500ms);
    redis().start();
    const auto result = submitter.wait(60s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    const auto counts = logged();
    EXPECT_EQ(counts.size(), 40u);
    for (const auto& [job, runs] : counts) {
        EXPECT_EQ(runs, 1) << job;
    }
}

// `gpusched wait` rides out a Redis out of reach for a while (a restart, a stall), as submit
// --wait does, and follows the job to its end.
TEST_F(RedisQueue, WaitRidesOutARedisOutOfReach)
{
    start_worker("0");
    ASSERT_EQ(run(m_dir, submit("sleep 1; echo done >> " + log() + "\n")).exit_status, 0);
    TempDir waiter_dir;
    Process waiter(waiter_dir, command("wait", {"1"}));
    ASSERT_TRUE(
        eventually([&] { return waiter.err_so_far().find("waiting for") != std::string::npos; }));
    redis().stop();
    EXPECT_TRUE(eventually([&] {
        return waiter.err_so_far().find("trying again") != std::string::npos;
    })) << waiter.err_so_far();
    EXPECT_TRUE(waiter.running()) << waiter.err_so_far();
    redis().start();
    const auto waited = waiter.wait(60s);
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(logged()["done"], 1);
}

// `retry --key-file` signs a job's next attempt only when its record still matches its
// signature: a command changed in Redis is never laundered into a signed one.
TEST_F(RedisQueue, RetryWithTheKeySignsOnlyWhatWasSigned)
{
    write_file(m_dir / "key", "the secret\n");
    const std::vector<std::string> key = {"--key-file", (m_dir / "key").string()};
    start_worker("0", key);
    auto with_key = key;
    with_key.push_back("--wait");
    const auto first = run(m_dir, submit("echo run >> " + log() + "; false\n", with_key));
    ASSERT_EQ(first.exit_status, 1) << first.err;
    const auto second = run(m_dir, submit("echo other >> " + log() + "; false\n", with_key));
    ASSERT_EQ(second.exit_status, 1) << second.err;
    redis().cli({"HSET", "gpusched:{default}:job:1", "command",
                 "touch " + (m_dir / "laundered").string()});
    auto retry = key;
    retry.push_back("1");
    const auto refused = gpusched("retry", retry);
    EXPECT_EQ(refused.exit_status, 1) << refused.err;
    EXPECT_NE(refused.err.find("does not match its signature"), std::string::npos) << refused.err;
    const auto unsigned_retry = gpusched("retry", {"2"});
    EXPECT_EQ(unsigned_retry.exit_status, 1) << "a signed job retried without the key";
    retry.back() = "2";
    EXPECT_EQ(gpusched("retry", retry).exit_status, 0);
    EXPECT_EQ(gpusched("wait", {"2"}).exit_status, 1) << "run again, and failed again";
    EXPECT_EQ(logged()["other"], 2) << "the retry, signed again, ran on the keyed worker";
    EXPECT_FALSE(fs::exists(m_dir / "laundered"));
}

TEST_F(RedisQueue, AWorkerWithAKeyRefusesJobsNotSignedWithIt)
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
}

TEST_F(RedisQueue, LogsOfALongOutputShowItsLast64KiBAndSaySo)
{
    start_worker("0");
    const auto submitted =
        run(m_dir, submit("head -c 100000 /dev/zero | tr '\\0' a; echo; echo end; echo e >&2\n",
                          {"--wait"}));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    const auto id = queue_status()["recent"].at(0)["id"].get<long long>();
    const auto logs = run(m_dir, {{"logs", "--redis", redis().url(), std::to_string(id)}});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(logs.out.size(), 64u * 1024);
    EXPECT_TRUE(logs.out.ends_with("aaa\nend\n"));
    EXPECT_NE(logs.err.find("e\n"), std::string::npos) << logs.err;
    EXPECT_NE(logs.err.find("only the last 64 KiB"), std::string::npos) << logs.err;
}

// A worker's own output directory is a way station: once a result (with its output's tail)
// is in Redis, the files of every attempt of the job go, not the last one's only.
TEST_F(RedisQueue, AWorkerKeepsNoOutputOfAJobWhoseResultIsSent)
{
    const auto state = m_dir / "state";
    auto& worker = start_worker("0", {"--retries", "2"}, {{"XDG_STATE_HOME", state.string()}});
    const auto submitted = run(m_dir, submit("echo try; echo failed >&2; exit 3\n", {"--wait"}));
    EXPECT_EQ(submitted.exit_status, 1) << submitted.err;
    const auto id = queue_status()["recent"].at(0)["id"].get<long long>();
    const auto logs = run(m_dir, {{"logs", "--redis", redis().url(), std::to_string(id)}});
    EXPECT_EQ(logs.out, "try\n") << "the last attempt's output, from Redis";
    EXPECT_NE(worker.err_so_far().find("attempt 3"), std::string::npos) << "tried three times";
    std::vector<std::string> left;
    for (const auto& entry : fs::recursive_directory_iterator(state / "gpusched" / "output")) {
        if (entry.is_regular_file()) {
            left.push_back(entry.path().string());
        }
    }
    EXPECT_TRUE(left.empty()) << left.size() << " files left, the first " << left.front();
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

TEST_F(RedisQueue, BadQueueArgumentsAreUsageErrors)
{
    EXPECT_EQ(run(m_dir, {{"submit", "--redis", "http://x"}}).exit_status, 255);
    EXPECT_EQ(run(m_dir, {{"submit", "--redis", redis().url(), "--queue", "a b"}}).exit_status,
              255);
    EXPECT_EQ(run(m_dir, {{"worker", "--redis", redis().url(), "--key-file", "/nonexistent"}})
                  .exit_status,
              255);
}

} // namespace
} // namespace gpusched::testing
