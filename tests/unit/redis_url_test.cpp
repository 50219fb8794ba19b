#include <gpusched/redis_url.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

RedisUrl parsed_url(std::string_view text, std::optional<std::string> auth = std::nullopt)
{
    auto url = parse_redis_url(text, auth);
    if (!url) {
        ADD_FAILURE() << url.message();
        return {};
    }
    return *url;
}

std::string url_error(std::string_view text)
{
    const auto url = parse_redis_url(text);
    return url ? "" : url.message();
}

TEST(RedisUrl, HostAloneTakesTheDefaults)
{
    const auto url = parsed_url("redis://queue.lab");
    EXPECT_EQ(url.host, "queue.lab");
    EXPECT_EQ(url.port, 6379);
    EXPECT_EQ(url.db, 0);
    EXPECT_EQ(url.user, "");
    EXPECT_FALSE(url.password.has_value());
}

TEST(RedisUrl, EveryPart)
{
    const auto url = parsed_url("redis://alice:s%40cret%3A1@10.0.0.5:6380/3");
    EXPECT_EQ(url.user, "alice");
    EXPECT_EQ(url.password, "s@cret:1");
    EXPECT_EQ(url.host, "10.0.0.5");
    EXPECT_EQ(url.port, 6380);
    EXPECT_EQ(url.db, 3);
    EXPECT_EQ(describe_redis_url(url), "redis://alice@10.0.0.5:6380/3") << "never the password";
}

TEST(RedisUrl, PasswordOnlyAndIpv6)
{
    const auto url = parsed_url("redis://:pw@[::1]:7000");
    EXPECT_EQ(url.user, "");
    EXPECT_EQ(url.password, "pw");
    EXPECT_EQ(url.host, "::1");
    EXPECT_EQ(url.port, 7000);
    EXPECT_EQ(describe_redis_url(url), "redis://[::1]:7000/0");
}

TEST(RedisUrl, RedisCliAuthIsThePasswordUnlessTheUrlHasOne)
{
    EXPECT_EQ(parsed_url("redis://h", "fromenv").password, "fromenv");
    EXPECT_EQ(parsed_url("redis://:inurl@h", "fromenv").password, "inurl");
    EXPECT_FALSE(parsed_url("redis://h", "").password.has_value());
}

TEST(RedisUrl, MistakesAreNamed)
{
    EXPECT_NE(url_error("http://h").find("not a redis:// URL"), std::string::npos);
    EXPECT_NE(url_error("redis://").find("no host"), std::string::npos);
    EXPECT_NE(url_error("redis://h:0").find("port '0'"), std::string::npos);
    EXPECT_NE(url_error("redis://h:x").find("port 'x'"), std::string::npos);
    EXPECT_NE(url_error("redis://h:").find("port ''"), std::string::npos);
    EXPECT_NE(url_error("redis://h/db").find("database 'db'"), std::string::npos);
    EXPECT_NE(url_error("redis://[::1").find("closing bracket"), std::string::npos);
    EXPECT_NE(url_error("redis://:%zz@h").find("percent-encoding"), std::string::npos);
}

} // namespace
} // namespace gpusched
