#include <gpusched/queue/redis/redis_client.hpp>

#include "hiredis_reply.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <sys/time.h>

#include <cerrno>

namespace gpusched::queue {
namespace {

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
    const bool io = m_context != nullptr && m_context->err == REDIS_ERR_IO;
    // hiredis reports a read or write past its timeout as an I/O error with EAGAIN.
    m_failure = io && (errno == EAGAIN || errno == EWOULDBLOCK) ? RedisFailure::timed_out
                                                                 : RedisFailure::lost;
    if (m_failure == RedisFailure::timed_out) {
        // "Resource temporarily unavailable" would not tell a user what happened.
        m_error = fmt::format("{}: no answer within {:.3g} s (a server stopped or overloaded)",
                              what, std::chrono::duration<double>(m_timeout).count());
    } else {
        m_error = m_context != nullptr && m_context->err != 0
                      ? fmt::format("{}: {}", what, m_context->errstr)
                      : what;
    }
    close();
}

bool RedisClient::connect()
{
    close();
    m_context = redisConnectWithTimeout(m_url.host.c_str(), m_url.port, to_timeval(m_timeout));
    if (m_context == nullptr || m_context->err != 0) {
        fail(fmt::format("cannot connect to {}", describe_redis_url(m_url)));
        m_failure = RedisFailure::cannot_connect;
        return false;
    }
    redisSetTimeout(m_context, to_timeval(m_timeout));
    // A blocked BLMOVE on a connection whose peer vanished would otherwise wait forever.
    redisEnableKeepAlive(m_context);
    auto login = login_commands(m_url);
    login.push_back({"PING"});
    const auto replies = pipeline(login);
    if (!replies) {
        m_failure = RedisFailure::cannot_connect;
        return false;
    }
    for (const auto& reply : *replies) {
        if (reply.is_error()) {
            m_error = fmt::format("{}: {}", describe_redis_url(m_url), reply.text);
            m_failure = RedisFailure::cannot_connect;
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
        m_failure = RedisFailure::error_reply;
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

std::optional<RedisReply> RedisClient::run(const RedisCommand& command)
{
    auto reply = this->command(command.to_words());
    if (reply && reply->is_unknown_script()) {
        reply = this->command(command.to_words(true));
    }
    return reply;
}

std::optional<std::vector<RedisReply>>
RedisClient::run_all(const std::vector<RedisCommand>& commands)
{
    std::vector<std::vector<std::string>> words;
    for (const auto& command : commands) {
        words.push_back(command.to_words());
    }
    auto replies = pipeline(words);
    if (!replies) {
        return replies;
    }
    for (std::size_t i = 0; i < replies->size(); ++i) {
        if ((*replies)[i].is_unknown_script()) {
            auto again = this->command(commands[i].to_words(true));
            if (!again) {
                return std::nullopt;
            }
            (*replies)[i] = std::move(*again);
        }
    }
    return replies;
}

} // namespace gpusched::queue
