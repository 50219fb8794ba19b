#include <gpusched/queue/redis/redis_client.hpp>

#include "hiredis_reply.hpp"

#include <gpusched/queue/submission.hpp>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <sys/time.h>

#include <cerrno>
#include <stdexcept>

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

Failure RedisClient::fail(const std::string& what)
{
    const bool io = m_context != nullptr && m_context->err == REDIS_ERR_IO;
    // hiredis reports a read or write past its timeout as an I/O error with EAGAIN.
    const int error = io ? errno : 0;
    std::string message;
    if (error == EAGAIN || error == EWOULDBLOCK) {
        // "Resource temporarily unavailable" would not tell a user what happened.
        message = fmt::format("{}: no answer within {:.3g} s (a server stopped or overloaded)",
                              what, std::chrono::duration<double>(m_timeout).count());
    } else {
        message = m_context != nullptr && m_context->err != 0
                      ? fmt::format("{}: {}", what, m_context->errstr)
                      : what;
    }
    close();
    return Failure{FailureKind::unreachable, std::move(message), error};
}

Result<void> RedisClient::connect()
{
    close();
    m_context = redisConnectWithTimeout(m_url.host.c_str(), m_url.port, to_timeval(m_timeout));
    if (m_context == nullptr || m_context->err != 0) {
        return fail(fmt::format("cannot connect to {}", describe_redis_url(m_url)));
    }
    redisSetTimeout(m_context, to_timeval(m_timeout));
    // A blocked BLMOVE on a connection whose peer vanished would otherwise wait forever.
    redisEnableKeepAlive(m_context);
    auto login = login_commands(m_url);
    login.push_back({"PING"});
    const auto replies = exchange(login);
    if (!replies) {
        return replies.failure();
    }
    for (const auto& reply : *replies) {
        if (reply.is_error()) {
            close();
            return login_failure(m_url, reply);
        }
    }
    return {};
}

Result<RedisReply> RedisClient::wait_reply()
{
    void* raw = nullptr;
    if (redisGetReply(m_context, &raw) != REDIS_OK || raw == nullptr) {
        return fail("lost the connection to Redis");
    }
    auto* reply = static_cast<redisReply*>(raw);
    auto copy = copy_reply(*reply);
    freeReplyObject(reply);
    return copy;
}

Result<std::vector<RedisReply>>
RedisClient::exchange(const std::vector<std::vector<std::string>>& commands)
{
    if (!connected()) {
        return Failure{FailureKind::unreachable, "not connected to Redis"};
    }
    for (const auto& args : commands) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lengths;
        for (const auto& arg : args) {
            argv.push_back(arg.data());
            lengths.push_back(arg.size());
        }
        if (redisAppendCommandArgv(m_context, static_cast<int>(argv.size()), argv.data(),
                                   lengths.data()) != REDIS_OK) {
            return fail("cannot queue a command");
        }
    }
    std::vector<RedisReply> replies;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        auto reply = wait_reply();
        if (!reply) {
            return reply.failure();
        }
        replies.push_back(std::move(*reply));
    }
    return replies;
}

Result<RedisReply> RedisClient::command(const std::vector<std::string>& args)
{
    auto replies = exchange({args});
    if (!replies) {
        return replies.failure();
    }
    auto& reply = replies->front();
    if (reply.is_error()) {
        return error_reply_failure(reply);
    }
    return std::move(reply);
}

Result<std::vector<RedisReply>>
RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands)
{
    auto replies = exchange(commands);
    if (!replies) {
        return replies;
    }
    for (const auto& reply : *replies) {
        if (reply.is_error()) {
            return error_reply_failure(reply);
        }
    }
    return replies;
}

Result<RedisReply> RedisClient::run(const RedisCommand& command)
{
    auto replies = run_all({command});
    if (!replies) {
        return replies.failure();
    }
    return std::move(replies->front());
}

Result<std::vector<RedisReply>> RedisClient::run_all(const std::vector<RedisCommand>& commands)
{
    std::vector<std::vector<std::string>> words;
    for (const auto& command : commands) {
        words.push_back(command.to_words());
    }
    auto replies = exchange(words);
    if (!replies) {
        return replies;
    }
    for (std::size_t i = 0; i < replies->size(); ++i) {
        auto& reply = (*replies)[i];
        if (reply.is_unknown_script()) {
            auto again = exchange({commands[i].to_words(true)});
            if (!again) {
                return again.failure();
            }
            reply = std::move(again->front());
        }
        if (reply.is_error()) {
            return error_reply_failure(reply);
        }
    }
    return replies;
}

void throw_redis_failure(const std::string& where, const Failure& failure)
{
    const auto message = fmt::format("{}: {}", where, failure.message);
    if (failure.kind == FailureKind::refused) {
        throw QueueRefused(message);
    }
    throw std::runtime_error(message);
}

} // namespace gpusched::queue
