// How an error reply of Redis becomes a Failure: its kind decides whether trying again can help.
#include <gpusched/queue/redis/redis_command.hpp>

#include <gtest/gtest.h>

namespace gpusched::queue {
namespace {

RedisReply error_reply(std::string text)
{
    RedisReply reply;
    reply.type = RedisReply::Type::error;
    reply.text = std::move(text);
    return reply;
}

TEST(RedisReply, AReplyRefusingTheConnectionIsRefused)
{
    for (const auto* text : {"NOAUTH Authentication required.",
                             "WRONGPASS invalid username-password pair or user is disabled.",
                             "NOPERM this user has no permissions to run the 'evalsha' command"}) {
        const auto failure = error_reply_failure(error_reply(text));
        EXPECT_EQ(failure.kind, FailureKind::refused) << text;
        EXPECT_EQ(failure.message, text);
    }
}

TEST(RedisReply, AnyOtherErrorReplyIsOfNoParticularKind)
{
    for (const auto* text : {"OOM command not allowed when used memory > 'maxmemory'.",
                             "READONLY You can't write against a read only replica.",
                             "ERR DB index is out of range"}) {
        EXPECT_EQ(error_reply_failure(error_reply(text)).kind, FailureKind::other) << text;
    }
    RedisReply status;
    status.type = RedisReply::Type::status;
    status.text = "NOAUTH is no error in a status";
    EXPECT_FALSE(status.is_refused());
}

} // namespace
} // namespace gpusched::queue
