// `gpusched submit` against a Redis that cannot be reached, goes away or forgets its data:
// it gives up within its retry policy (exit status 75) and says a reset queue lost its jobs
// (exit status 255), rather than waiting forever.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// Long enough for any policy a test sets; a submit still running then is killed, and fails.
constexpr auto k_bound = 40s;

std::string commands(int count)
{
    std::vector<std::string> lines;
    for (int i = 1; i <= count; ++i) {
        lines.push_back(fmt::format("echo {}", i));
    }
    return join_lines(lines);
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// A loopback port that takes connections (the kernel completes them) and never answers,
// as a server that hangs does.
class SilentServer {
public:
    SilentServer()
    {
        m_fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (m_fd < 0 || bind(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            listen(m_fd, 64) != 0 ||
            getsockname(m_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("cannot listen on a loopback port");
        }
        m_port = ntohs(address.sin_port);
    }
    ~SilentServer() { close(m_fd); }
    SilentServer(const SilentServer&) = delete;
    SilentServer& operator=(const SilentServer&) = delete;

    std::string url() const { return fmt::format("redis://127.0.0.1:{}", m_port); }

private:
    int m_fd = -1;
    int m_port = 0;
};

class SubmitFaults : public ::testing::Test, public QueueFixture {
protected:
    SubmitFaults() : QueueFixture(Store::redis, Persistence::every_write) {}

    // A submit to the server at `url`, which need not be this test's.
    LaunchOptions submit_to(const std::string& url, const std::string& input,
                            std::vector<std::string> extra = {}) const
    {
        std::vector<std::string> args = {"submit", "--redis", url};
        args.insert(args.end(), extra.begin(), extra.end());
        return {args, input};
    }

    // A submit --wait whose jobs are all in the queue, waiting for their end.
    std::unique_ptr<Process> waiting_submit(const std::string& input,
                                            std::vector<std::string> extra)
    {
        extra.push_back("--wait");
        auto process = std::make_unique<Process>(m_dir, submit(input, extra));
        const bool submitted =
            eventually([&] { return contains(process->err_so_far(), "submitted to queue"); });
        EXPECT_TRUE(submitted) << process->err_so_far();
        return process;
    }

    void flushall()
    {
        const TempDir dir; // not m_dir, whose gpusched.err the submit is writing
        const auto flushed = run(dir, {{"-p", std::to_string(redis().port()), "FLUSHALL"},
                                       {},
                                       {},
                                       {},
                                       fs::path("/usr/bin/redis-cli"),
                                       {}});
        ASSERT_EQ(flushed.exit_status, 0) << flushed.err;
    }
};

TEST_F(SubmitFaults, AWrongAddressIsGivenUpOnWithStatus75NamingIt)
{
    const auto result = run(m_dir, submit_to("redis://127.0.0.1:1", commands(2)), k_bound);
    ASSERT_FALSE(result.timed_out) << "still trying after " << k_bound.count() << " s";
    EXPECT_EQ(result.exit_status, 75) << result.err;
    EXPECT_TRUE(contains(result.err, "gpusched: error: cannot reach Redis at "
                                     "redis://127.0.0.1:1/0 within 10 s (--connect-timeout): "
                                     "Connection refused"))
        << result.err;
    EXPECT_TRUE(contains(result.err, "nothing was submitted")) << result.err;
}

TEST_F(SubmitFaults, TheConnectTimeoutIsHonoured)
{
    // Well under the default of 10 s: only the option, or its variable, can make it.
    const auto given =
        run(m_dir, submit_to("redis://127.0.0.1:1", commands(2), {"--connect-timeout", "0.5"}), 8s);
    ASSERT_FALSE(given.timed_out);
    EXPECT_EQ(given.exit_status, 75) << given.err;
    EXPECT_TRUE(contains(given.err, "within 0.5 s (--connect-timeout)")) << given.err;

    auto from_environment = submit_to("redis://127.0.0.1:1", commands(2));
    from_environment.env["GPUSCHED_CONNECT_TIMEOUT"] = "1";
    const auto variable = run(m_dir, from_environment, 8s);
    ASSERT_FALSE(variable.timed_out);
    EXPECT_EQ(variable.exit_status, 75) << variable.err;

    for (const auto* bad : {"0", "-1", "nan", "1e10"}) {
        const auto refused =
            run(m_dir, submit_to(redis().url(), commands(1), {"--connect-timeout", bad}));
        EXPECT_EQ(refused.exit_status, 255) << bad;
        EXPECT_TRUE(contains(refused.err, "--connect-timeout")) << refused.err;
    }
}

TEST_F(SubmitFaults, AServerThatNeverAnswersCostsNoMoreThanTheConnectTimeout)
{
    // Each try waits for an answer only as long as the policy has left, not the 5 s a command
    // may take.
    const SilentServer silent;
    const auto result =
        run(m_dir, submit_to(silent.url(), commands(2), {"--connect-timeout", "1"}), 4500ms);
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 75) << result.err;
    EXPECT_TRUE(contains(result.err, "cannot reach Redis at " + silent.url() + "/0 within 1 s"))
        << result.err;
}

TEST_F(SubmitFaults, RedisGoneForGoodDuringAWaitEndsItWith75NamingTheJobs)
{
    auto submitter = waiting_submit(commands(3), {"--connect-timeout", "2"});
    redis().stop();
    const auto result = submitter->wait(k_bound);
    ASSERT_FALSE(result.timed_out) << "waited on after Redis was gone: " << result.err;
    EXPECT_EQ(result.exit_status, 75) << result.err;
    EXPECT_TRUE(contains(result.err, "lost the connection to Redis at " + redis().url() + "/0"))
        << result.err;
    EXPECT_TRUE(contains(result.err, "could not connect again within 2 s (--connect-timeout)"))
        << result.err;
    EXPECT_TRUE(contains(result.err, "the outcome of 3 jobs is unknown: 1, 2, 3")) << result.err;
}

TEST_F(SubmitFaults, RedisBackWithinThePolicyLetsTheWaitGoOnToTheEnd)
{
    auto submitter = waiting_submit(commands(3), {"--connect-timeout", "30"});
    redis().stop();
    std::this_thread::sleep_for(1500ms);
    redis().start(); // with its data: the queue was not reset
    start_worker("GPU-a0");
    const auto result = submitter->wait(k_bound);
    ASSERT_FALSE(result.timed_out) << result.err;
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(contains(result.err, "3 jobs: 3 succeeded, 0 failed")) << result.err;
}

TEST_F(SubmitFaults, AQueueResetDuringAWaitEndsItWith255NamingTheLostJobs)
{
    // No worker: the jobs are still queued when Redis forgets them.
    auto submitter = waiting_submit(commands(25), {"--queue", "faults"});
    flushall();
    const auto result = submitter->wait(k_bound);
    ASSERT_FALSE(result.timed_out) << "waited on for jobs that no longer exist: " << result.err;
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_TRUE(contains(
        result.err,
        fmt::format("gpusched: error: queue faults at {}/0 was reset after these jobs were "
                    "submitted; 25 jobs lost: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
                    "16, 17, 18, 19, 20 and 5 more",
                    redis().url())))
        << result.err;
}

} // namespace
} // namespace gpusched::testing
