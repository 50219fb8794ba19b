// RedisQueue::retry against a real Redis: each refusal is a Failure whose kind a caller (an
// exit status, an HTTP status) can decide by.
#include "redis_server.hpp"

#include <gpusched/queue/redis/redis_queue.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class RedisRetry : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(m_client.connect().ok()); }

    // Job `id` of batch 1, queued; signed with `signature` when it is not "".
    void submit(const std::string& id, const std::string& signature = "")
    {
        const auto submitted = m_queue.submit(
            m_client, "1", {{id, "true", "1", signature, "", "someone", "here", "/tmp"}});
        ASSERT_TRUE(submitted.ok()) << submitted.message();
    }

    // As a worker ends a job that failed, as far as retry looks.
    void end_failed(const std::string& id)
    {
        m_redis.cli({"LREM", "gpusched:{retried}:pending", "0", id});
        m_redis.cli({"HSET", "gpusched:{retried}:job:" + id, "outcome", "failed"});
    }

    RedisServer m_redis{Persistence::none};
    queue::RedisClient m_client{RedisUrl{"127.0.0.1", m_redis.port(), "", std::nullopt, 0}, 2s};
    queue::RedisQueue m_queue{"retried"};
};

TEST_F(RedisRetry, NoSuchJobIsNotFound)
{
    const auto retried = m_queue.retry(m_client, "7", std::nullopt);
    ASSERT_FALSE(retried.ok());
    EXPECT_EQ(retried.kind(), FailureKind::not_found);
    EXPECT_EQ(retried.message(), "no job 7 in queue retried on redis://127.0.0.1:" +
                                     std::to_string(m_redis.port()) + "/0");
}

TEST_F(RedisRetry, AJobNotEndedIsABadRequest)
{
    submit("1");
    const auto retried = m_queue.retry(m_client, "1", std::nullopt);
    ASSERT_FALSE(retried.ok());
    EXPECT_EQ(retried.kind(), FailureKind::bad_request);
    EXPECT_EQ(retried.message(), "job 1 is queued: only an ended job can be queued again");
}

TEST_F(RedisRetry, ASignedJobWithoutTheKeyIsRefusedAsABadRequest)
{
    submit("1", "a signature");
    end_failed("1");
    const auto retried = m_queue.retry(m_client, "1", std::nullopt);
    ASSERT_FALSE(retried.ok());
    EXPECT_EQ(retried.kind(), FailureKind::bad_request) << retried.message();
}

TEST_F(RedisRetry, AFailedJobIsQueuedAgain)
{
    submit("1");
    end_failed("1");
    const auto retried = m_queue.retry(m_client, "1", std::nullopt);
    EXPECT_TRUE(retried.ok()) << retried.message();
    EXPECT_EQ(m_redis.cli({"LRANGE", "gpusched:{retried}:pending", "0", "-1"}), "1\n");
}

TEST_F(RedisRetry, ARedisGoneIsUnreachableAndNamesTheQueue)
{
    m_redis.stop();
    const auto retried = m_queue.retry(m_client, "1", std::nullopt);
    ASSERT_FALSE(retried.ok());
    EXPECT_EQ(retried.kind(), FailureKind::unreachable);
    EXPECT_EQ(retried.message().rfind("queue retried on redis://127.0.0.1:", 0), 0)
        << retried.message();
    EXPECT_FALSE(m_client.connected());
}

} // namespace
} // namespace gpusched::testing
