#pragma once

#include <gpusched/redis_url.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace gpusched::queue {

// A reply from Redis, copied out of hiredis's structures.
struct RedisReply {
    enum class Type { nil, integer, string, status, error, array };
    Type type = Type::nil;
    long long integer = 0;
    std::string text; // of a string, status or error
    std::vector<RedisReply> elements;

    bool is_error() const { return type == Type::error; }
};

// One connection to Redis with hiredis. Commands are synchronous and bounded by the timeout;
// a command whose reply is long in coming (a blocking BLMOVE) is sent with send() and its
// reply read with read_reply() once poll says fd() is readable, so the event loop never
// blocks on it. A broken connection is closed and reported; reconnecting is the caller's.
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
    const RedisUrl& url() const { return m_url; }

    // A command and its reply; nothing when the connection broke (it is then closed).
    std::optional<RedisReply> command(const std::vector<std::string>& args);
    // Several commands in one round trip, their replies in order.
    std::optional<std::vector<RedisReply>>
    pipeline(const std::vector<std::vector<std::string>>& commands);

    // Sends a command without waiting for its reply.
    bool send(const std::vector<std::string>& args);
    int fd() const;
    // What has arrived: the reply once it is whole, else nothing; on an error the connection
    // is closed (connected() turns false).
    std::optional<RedisReply> read_reply();

private:
    bool append(const std::vector<std::string>& args);
    bool flush();
    std::optional<RedisReply> wait_reply();
    void fail(const std::string& what);

    RedisUrl m_url;
    std::chrono::milliseconds m_timeout;
    redisContext* m_context = nullptr;
    std::string m_error;
};

} // namespace gpusched::queue
