#include <gpusched/queue/redis_client.hpp>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <sys/time.h>

namespace gpusched::queue {
namespace {

RedisReply copy_reply(const redisReply& reply)
{
    RedisReply copy;
    switch (reply.type) {
    case REDIS_REPLY_INTEGER:
        copy.type = RedisReply::Type::integer;
        copy.integer = reply.integer;
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        copy.type = reply.type == REDIS_REPLY_STRING   ? RedisReply::Type::string
                    : reply.type == REDIS_REPLY_STATUS ? RedisReply::Type::status
                                                       : RedisReply::Type::error;
        copy.text.assign(reply.str, reply.len);
        break;
    case REDIS_REPLY_ARRAY:
        copy.type = RedisReply::Type::array;
        for (std::size_t i = 0; i < reply.elements; ++i) {
            copy.elements.push_back(copy_reply(*reply.element[i]));
        }
        break;
    default:
        break;
    }
    return copy;
}

timeval to_timeval(std::chrono::milliseconds timeout)
{
    return timeval{static_cast<time_t>(timeout.count() / 1000),
                   static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
}

} // namespace

RedisClient::RedisClient(RedisUrl url, std::chrono::milliseconds timeout)
    : m_url(std::move(url)), m_timeout(timeout)
{
}

RedisClient::~RedisClient()
{
    close();
}

void RedisClient::close()
{
    if (m_context != nullptr) {
        redisFree(m_context);
        m_context = nullptr;
    }
}

void RedisClient::fail(const std::string& what)
{
    m_error = m_context != nullptr && m_context->err != 0
                  ? fmt::format("{}: {}", what, m_context->errstr)
                  : what;
    close();
}

bool RedisClient::connect()
{
    close();
    m_context = redisConnectWithTimeout(m_url.host.c_str(), m_url.port, to_timeval(m_timeout));
    if (m_context == nullptr || m_context->err != 0) {
        fail(fmt::format("cannot connect to {}", describe_redis_url(m_url)));
        return false;
    }
    redisSetTimeout(m_context, to_timeval(m_timeout));
    // A blocked BLMOVE on a connection whose peer vanished would otherwise wait forever.
    redisEnableKeepAlive(m_context);
    std::vector<std::vector<std::string>> login;
    if (m_url.password) {
        login.push_back(m_url.user.empty()
                            ? std::vector<std::string>{"AUTH", *m_url.password}
                            : std::vector<std::string>{"AUTH", m_url.user, *m_url.password});
    }
    if (m_url.db != 0) {
        login.push_back({"SELECT", std::to_string(m_url.db)});
    }
    login.push_back({"PING"});
    const auto replies = pipeline(login);
    if (!replies) {
        return false;
    }
    for (const auto& reply : *replies) {
        if (reply.is_error()) {
            m_error = fmt::format("{}: {}", describe_redis_url(m_url), reply.text);
            close();
            return false;
        }
    }
    return true;
}

bool RedisClient::append(const std::vector<std::string>& args)
{
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& arg : args) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
    }
    if (redisAppendCommandArgv(m_context, static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
        fail("cannot queue a command");
        return false;
    }
    return true;
}

bool RedisClient::flush()
{
    int done = 0;
    while (done == 0) {
        if (redisBufferWrite(m_context, &done) != REDIS_OK) {
            fail("lost the connection to Redis");
            return false;
        }
    }
    return true;
}

std::optional<RedisReply> RedisClient::wait_reply()
{
    void* raw = nullptr;
    if (redisGetReply(m_context, &raw) != REDIS_OK || raw == nullptr) {
        fail("lost the connection to Redis");
        return std::nullopt;
    }
    auto* reply = static_cast<redisReply*>(raw);
    auto copy = copy_reply(*reply);
    freeReplyObject(reply);
    if (copy.is_error()) {
        m_error = copy.text;
    }
    return copy;
}

std::optional<RedisReply> RedisClient::command(const std::vector<std::string>& args)
{
    if (!connected() || !append(args)) {
        return std::nullopt;
    }
    return wait_reply();
}

std::optional<std::vector<RedisReply>>
RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands)
{
    if (!connected()) {
        return std::nullopt;
    }
    for (const auto& args : commands) {
        if (!append(args)) {
            return std::nullopt;
        }
    }
    std::vector<RedisReply> replies;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        auto reply = wait_reply();
        if (!reply) {
            return std::nullopt;
        }
        replies.push_back(std::move(*reply));
    }
    return replies;
}

bool RedisClient::send(const std::vector<std::string>& args)
{
    return connected() && append(args) && flush();
}

int RedisClient::fd() const
{
    return m_context != nullptr ? m_context->fd : -1;
}

std::optional<RedisReply> RedisClient::read_reply()
{
    if (!connected()) {
        return std::nullopt;
    }
    void* raw = nullptr;
    if (redisBufferRead(m_context) != REDIS_OK ||
        redisGetReplyFromReader(m_context, &raw) != REDIS_OK) {
        fail("lost the connection to Redis");
        return std::nullopt;
    }
    if (raw == nullptr) {
        return std::nullopt; // more is to come
    }
    auto* reply = static_cast<redisReply*>(raw);
    auto copy = copy_reply(*reply);
    freeReplyObject(reply);
    return copy;
}

} // namespace gpusched::queue
