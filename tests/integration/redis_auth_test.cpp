// A Redis that wants a password (`--requirepass`) and is given none, or a wrong one: the
// failure is `refused`, says which, and the commands end with the status of a queue error at
// once, rather than trying again until the connect timeout as for a server out of reach.
#include "redis_server.hpp"

#include <gpusched/queue/redis/redis_client.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* k_required_password = "s3cret";
// Far longer than a refusal takes; a command still trying then is killed, and fails.
constexpr auto k_long_connect_timeout_s = "60";
constexpr auto k_refusal_bound = 20s;

bool mentions(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

class RedisAuth : public ::testing::Test {
protected:
    RedisUrl url_with(std::optional<std::string> password) const
    {
        return RedisUrl{"127.0.0.1", m_redis.port(), "", std::move(password), 0};
    }

    // `gpusched ARGS...` with the URL given, and no $REDISCLI_AUTH to fill in a password.
    Finished gpusched(std::vector<std::string> args) const
    {
        LaunchOptions options{std::move(args)};
        options.env["REDISCLI_AUTH"] = std::nullopt;
        return run(m_dir, options, k_refusal_bound);
    }

    std::string url_without_password() const
    {
        return fmt::format("redis://127.0.0.1:{}", m_redis.port());
    }
    std::string url_with_wrong_password() const
    {
        return fmt::format("redis://:wrong@127.0.0.1:{}", m_redis.port());
    }

    TempDir m_dir;
    RedisServer m_redis{std::string(k_required_password)};
};

TEST_F(RedisAuth, NoPasswordIsRefusedAndSaysOne)
{
    queue::RedisClient client(url_with(std::nullopt), 2s);
    const auto connected = client.connect();
    ASSERT_FALSE(connected.ok());
    EXPECT_EQ(connected.kind(), FailureKind::refused) << connected.message();
    EXPECT_TRUE(mentions(connected.message(), "wants a password and none was given"))
        << connected.message();
    EXPECT_TRUE(mentions(connected.message(), "NOAUTH")) << connected.message();
    EXPECT_FALSE(client.connected());
}

TEST_F(RedisAuth, AWrongPasswordIsRefusedAndSaysSo)
{
    queue::RedisClient client(url_with("wrong"), 2s);
    const auto connected = client.connect();
    ASSERT_FALSE(connected.ok());
    EXPECT_EQ(connected.kind(), FailureKind::refused) << connected.message();
    EXPECT_TRUE(mentions(connected.message(), "refused the password")) << connected.message();
    EXPECT_TRUE(mentions(connected.message(), "WRONGPASS")) << connected.message();
}

TEST_F(RedisAuth, TheRightPasswordLogsIn)
{
    queue::RedisClient client(url_with(k_required_password), 2s);
    ASSERT_TRUE(client.connect().ok());
    const auto pong = client.command({"PING"});
    ASSERT_TRUE(pong.ok()) << pong.message();
    EXPECT_EQ(pong->text, "PONG");
}

TEST_F(RedisAuth, AServerOutOfReachIsUnreachable)
{
    m_redis.stop();
    queue::RedisClient client(url_with(k_required_password), 2s);
    const auto connected = client.connect();
    ASSERT_FALSE(connected.ok());
    EXPECT_EQ(connected.kind(), FailureKind::unreachable) << connected.message();
}

TEST_F(RedisAuth, SubmitEndsAtOnceAsOnAQueueErrorNotAsUnreachable)
{
    for (const auto& url : {url_without_password(), url_with_wrong_password()}) {
        const auto submitted = gpusched({"submit", "--redis", url, "--connect-timeout",
                                         k_long_connect_timeout_s, "--", "true"});
        ASSERT_FALSE(submitted.timed_out)
            << url << ": still trying after " << k_refusal_bound.count() << " s";
        EXPECT_EQ(submitted.exit_status, 255) << url << ": " << submitted.err;
        EXPECT_TRUE(mentions(submitted.err, "password")) << submitted.err;
        EXPECT_TRUE(mentions(submitted.err, "nothing was submitted")) << submitted.err;
        EXPECT_FALSE(mentions(submitted.err, "trying again")) << submitted.err;
    }
}

TEST_F(RedisAuth, WaitAndTheQueueCommandsEndAtOnceToo)
{
    const auto waited = gpusched({"wait", "--redis", url_without_password(), "--connect-timeout",
                                  k_long_connect_timeout_s, "1"});
    ASSERT_FALSE(waited.timed_out) << "still trying after " << k_refusal_bound.count() << " s";
    EXPECT_EQ(waited.exit_status, 255) << waited.err;
    EXPECT_TRUE(mentions(waited.err, "wants a password and none was given")) << waited.err;
    EXPECT_FALSE(mentions(waited.err, "trying again")) << waited.err;

    const auto listed = gpusched({"queue", "--redis", url_with_wrong_password()});
    EXPECT_EQ(listed.exit_status, 255) << listed.err;
    EXPECT_TRUE(mentions(listed.err, "refused the password")) << listed.err;
}

} // namespace
} // namespace gpusched::testing
