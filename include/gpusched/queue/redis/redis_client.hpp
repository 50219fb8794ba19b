#pragma once

#include <gpusched/queue/redis/redis_command.hpp>
#include <gpusched/redis_url.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace gpusched::queue {

// One synchronous connection to Redis with hiredis, for the command-line tools (submit,
// queue): every command is bounded by the timeout. A broken connection is closed and
// reported, with the kind of failure; reconnecting is the caller's. (The worker, which must
// never block, uses AsyncRedis.)
class RedisClient {
public:
    RedisClient(RedisUrl url, std::chrono::milliseconds timeout);
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    // Connects and logs in (AUTH, SELECT); false with the reason in error().
    bool connect();
    bool connected() const { return m_context != nullptr; }
    void close();
    const std::string& error() const { return m_error; }
    // What went wrong last: an error reply leaves the connection open, the rest close it.
    RedisFailure failure() const { return m_failure; }
    const RedisUrl& url() const { return m_url; }

    // A command and its reply; nothing when the connection broke (it is then closed).
    std::optional<RedisReply> command(const std::vector<std::string>& args);
    // Several commands in one round trip, their replies in order.
    std::optional<std::vector<RedisReply>>
    pipeline(const std::vector<std::vector<std::string>>& commands);

    // A command of the protocol: a script goes by its SHA-1, and by its text when Redis
    // does not know it yet (which loads it for every later call).
    std::optional<RedisReply> run(const RedisCommand& command);
    std::optional<std::vector<RedisReply>> run_all(const std::vector<RedisCommand>& commands);

private:
    bool append(const std::vector<std::string>& args);
    std::optional<RedisReply> wait_reply();
    void fail(const std::string& what);

    RedisUrl m_url;
    std::chrono::milliseconds m_timeout;
    redisContext* m_context = nullptr;
    std::string m_error;
    RedisFailure m_failure = RedisFailure::cannot_connect;
};

} // namespace gpusched::queue
