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

const RedisUrl k_url{"queue-host", 6379, "", std::nullopt, 0};

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

TEST(RedisReply, ALoginRefusedSaysWhichPasswordToGive)
{
    const auto none = login_failure(k_url, error_reply("NOAUTH Authentication required."));
    EXPECT_EQ(none.kind, FailureKind::refused);
    EXPECT_EQ(none.message, "redis://queue-host:6379/0: the server wants a password and none was "
                            "given (give it in the URL, redis://:PASSWORD@HOST, or in "
                            "$REDISCLI_AUTH): NOAUTH Authentication required.");

    const auto wrong = login_failure(
        k_url, error_reply("WRONGPASS invalid username-password pair or user is disabled."));
    EXPECT_EQ(wrong.kind, FailureKind::refused);
    EXPECT_NE(wrong.message.find("refused the password"), std::string::npos) << wrong.message;

    const auto other = login_failure(k_url, error_reply("ERR DB index is out of range"));
    EXPECT_EQ(other.kind, FailureKind::other);
    EXPECT_EQ(other.message, "redis://queue-host:6379/0: ERR DB index is out of range");
}

} // namespace
} // namespace gpusched::queue
