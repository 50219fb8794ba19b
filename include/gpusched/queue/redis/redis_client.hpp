#pragma once

#include <gpusched/queue/redis/redis_command.hpp>
#include <gpusched/redis_url.hpp>
#include <gpusched/result.hpp>

#include <chrono>
#include <string>
#include <vector>

struct redisContext;

namespace gpusched::queue {

// One synchronous connection to Redis with hiredis, for the command-line tools (submit,
// queue): every command is bounded by the timeout. Each call returns its failure: a broken
// connection, or one that did not answer in time, is closed and `unreachable` (reconnecting is
// the caller's); an error reply leaves it open, and is `refused` where Redis does not let the
// connection do it. (The worker, which must never block, uses AsyncRedis.)
class RedisClient {
public:
    RedisClient(RedisUrl url, std::chrono::milliseconds timeout);
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    // Connects and logs in (AUTH, SELECT): `unreachable` when no connection was made or it
    // did not answer, `refused` when the password is missing or wrong.
    Result<void> connect();
    bool connected() const { return m_context != nullptr; }
    void close();
    const RedisUrl& url() const { return m_url; }

    // A command and its reply.
    Result<RedisReply> command(const std::vector<std::string>& args);
    // Several commands in one round trip, their replies in order; an error reply to any of
    // them fails them all.
    Result<std::vector<RedisReply>> pipeline(const std::vector<std::vector<std::string>>& commands);

    // A command of the protocol: a script goes by its SHA-1, and by its text when Redis
    // does not know it yet (which loads it for every later call).
    Result<RedisReply> run(const RedisCommand& command);
    Result<std::vector<RedisReply>> run_all(const std::vector<RedisCommand>& commands);

private:
    // The replies as they came, error replies among them.
    Result<std::vector<RedisReply>> exchange(const std::vector<std::vector<std::string>>& commands);
    Result<RedisReply> wait_reply();
    // Closes the connection; the failure that says why.
    Failure fail(const std::string& what);

    RedisUrl m_url;
    std::chrono::milliseconds m_timeout;
    redisContext* m_context = nullptr;
};

// Ends the command with `failure`, said after `where` (the server, the queue): as
// QueueRefused when Redis refused the connection, which trying again would not change; else
// as a runtime_error.
[[noreturn]] void throw_redis_failure(const std::string& where, const Failure& failure);

} // namespace gpusched::queue
