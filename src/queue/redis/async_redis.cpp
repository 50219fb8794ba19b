#include <gpusched/queue/redis/async_redis.hpp>

#include "hiredis_reply.hpp"

#include <fmt/format.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <utility>

namespace gpusched::queue {

// hiredis asks for reads and writes through these hooks; the poll asks for them in turn.
struct EventHooks {
    static AsyncRedis& of(void* data) { return *static_cast<AsyncRedis*>(data); }
    static void add_read(void* data) { of(data).m_wants_read = true; }
    static void del_read(void* data) { of(data).m_wants_read = false; }
    static void add_write(void* data) { of(data).m_wants_write = true; }
    static void del_write(void* data) { of(data).m_wants_write = false; }
    static void cleanup(void* data)
    {
        of(data).m_wants_read = false;
        of(data).m_wants_write = false;
    }
};

AsyncRedis::AsyncRedis(RedisUrl url, std::chrono::milliseconds timeout,
                       std::vector<const LuaScript*> scripts)
    : m_url(std::move(url)), m_timeout(timeout), m_scripts(std::move(scripts))
{
}

AsyncRedis::~AsyncRedis()
{
    m_on_up = nullptr;
    m_on_down = nullptr;
    close();
    m_arrived.clear();
}

void AsyncRedis::connect(std::function<void()> on_up,
                         std::function<void(RedisFailure, const std::string&)> on_down)
{
    close();
    m_on_up = std::move(on_up);
    m_on_down = std::move(on_down);
    // The connect(2) itself does not block; resolving a host name may (getaddrinfo).
    m_context = redisAsyncConnect(m_url.host.c_str(), m_url.port);
    m_state = State::connecting;
    m_connect_deadline = Clock::now() + m_timeout;
    if (m_context == nullptr || m_context->err != 0) {
        const auto error = m_context != nullptr ? std::string(m_context->errstr) : "out of memory";
        if (m_context != nullptr) {
            redisAsyncFree(m_context);
            m_context = nullptr;
        }
        m_state = State::closed;
        went_down(RedisFailure::cannot_connect, error);
        return;
    }
    m_context->data = this;
    m_context->ev.data = this;
    m_context->ev.addRead = EventHooks::add_read;
    m_context->ev.delRead = EventHooks::del_read;
    m_context->ev.addWrite = EventHooks::add_write;
    m_context->ev.delWrite = EventHooks::del_write;
    m_context->ev.cleanup = EventHooks::cleanup;
    redisAsyncSetConnectCallback(m_context, &AsyncRedis::on_connected);
    redisAsyncSetDisconnectCallback(m_context, &AsyncRedis::on_disconnected);
    // A blocked BLMOVE on a connection whose peer vanished would otherwise wait forever.
    redisEnableKeepAlive(&m_context->c);
    log_in();
}

// AUTH and SELECT, the scripts loaded, then a PING: the connection is ready when it answers.
void AsyncRedis::log_in()
{
    auto steps = login_commands(m_url);
    for (const auto* script : m_scripts) {
        steps.push_back({"SCRIPT", "LOAD", script->source()});
    }
    steps.push_back({"PING"});
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const bool last = i + 1 == steps.size();
        auto step = m_pending.insert(
            m_pending.end(),
            Pending{this, RedisCommand::plain(steps[i]),
                    [this, last, what = steps[i][0]](RedisResult result) {
                        if (m_state != State::connecting) {
                            return;
                        }
                        if (!result.ok()) {
                            const auto error = result.reply ? what + ": " + result.reply->text
                                                            : result.error;
                            close(RedisFailure::cannot_connect, error);
                            went_down(RedisFailure::cannot_connect, error);
                        } else if (last) {
                            m_state = State::ready;
                            if (m_on_up) {
                                m_on_up();
                            }
                        }
                    },
                    m_connect_deadline});
        submit(step);
    }
}

void AsyncRedis::close(RedisFailure why, const std::string& error)
{
    m_state = State::closed;
    if (m_context == nullptr) {
        return;
    }
    m_closing_why = why;
    m_closing_error = error;
    auto* context = m_context;
    m_context = nullptr;
    // Calls every waiting command's callback with no reply; they arrive in m_arrived.
    redisAsyncFree(context);
}

void AsyncRedis::went_down(RedisFailure why, const std::string& error)
{
    m_state = State::closed;
    m_down = Down{why, error};
}

void AsyncRedis::send(const RedisCommand& command, Done done, bool blocking)
{
    std::optional<Clock::time_point> deadline;
    if (!blocking) {
        deadline = Clock::now() + m_timeout;
    }
    auto pending = m_pending.insert(m_pending.end(),
                                    Pending{this, command, std::move(done), deadline, false});
    if (m_state != State::ready) {
        m_arrived.push_back({pending, RedisResult{std::nullopt, RedisFailure::lost,
                                                  "not connected"}});
        return;
    }
    submit(pending);
}

void AsyncRedis::submit(std::list<Pending>::iterator pending)
{
    const auto words = pending->command.to_words(pending->by_source);
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& word : words) {
        argv.push_back(word.data());
        lengths.push_back(word.size());
    }
    if (m_context == nullptr ||
        redisAsyncCommandArgv(m_context, &AsyncRedis::on_reply, &*pending,
                              static_cast<int>(argv.size()), argv.data(),
                              lengths.data()) != REDIS_OK) {
        m_arrived.push_back({pending, RedisResult{std::nullopt, RedisFailure::lost,
                                                  "the connection is closing"}});
    }
}

void AsyncRedis::on_reply(redisAsyncContext* context, void* reply, void* data)
{
    auto* pending = static_cast<Pending*>(data);
    auto& self = *pending->owner;
    // The list node's iterator, from its address: pending points into m_pending.
    auto at = self.m_pending.begin();
    while (at != self.m_pending.end() && &*at != pending) {
        ++at;
    }
    RedisResult result;
    if (reply != nullptr) {
        result.reply = copy_reply(*static_cast<redisReply*>(reply));
        if (result.reply->is_error()) {
            result.failure = RedisFailure::error_reply;
            result.error = result.reply->text;
        }
    } else if ((context->c.flags & REDIS_CONNECTED) == 0) {
        result.failure = RedisFailure::cannot_connect;
        result.error = context->c.err != 0 ? context->c.errstr : self.m_closing_error;
    } else if (context->c.err != 0) {
        result.failure = RedisFailure::lost;
        result.error = context->c.errstr;
    } else {
        result.failure = self.m_closing_why;
        result.error = self.m_closing_error;
    }
    self.m_arrived.push_back({at, std::move(result)});
}

void AsyncRedis::on_connected(const redisAsyncContext* context, int status)
{
    auto& self = *static_cast<AsyncRedis*>(context->data);
    if (status != REDIS_OK) {
        // hiredis frees the context right after this.
        self.m_context = nullptr;
        self.went_down(RedisFailure::cannot_connect,
                       fmt::format("cannot connect: {}", context->c.errstr));
    }
}

void AsyncRedis::on_disconnected(const redisAsyncContext* context, int status)
{
    auto& self = *static_cast<AsyncRedis*>(context->data);
    if (self.m_context == nullptr) {
        return; // our own close()
    }
    self.m_context = nullptr;
    self.went_down(RedisFailure::lost,
                   status == REDIS_OK ? std::string("closed by Redis") : context->c.errstr);
}

void AsyncRedis::add_poll_fds(std::vector<pollfd>& fds) const
{
    if (m_context == nullptr) {
        return;
    }
    const short events =
        static_cast<short>((m_wants_read ? POLLIN : 0) | (m_wants_write ? POLLOUT : 0));
    fds.push_back({m_context->c.fd, events, 0});
}

bool AsyncRedis::on_ready(const pollfd& ready)
{
    if (m_context == nullptr || ready.fd != m_context->c.fd) {
        return false;
    }
    const bool trouble = (ready.revents & (POLLERR | POLLHUP)) != 0;
    if ((ready.revents & POLLOUT) != 0 || (trouble && m_wants_write)) {
        redisAsyncHandleWrite(m_context);
    }
    if (m_context != nullptr && ((ready.revents & POLLIN) != 0 || trouble)) {
        redisAsyncHandleRead(m_context);
    }
    deliver();
    return true;
}

std::optional<AsyncRedis::Clock::time_point> AsyncRedis::next_deadline() const
{
    if (!m_arrived.empty() || m_down) {
        return Clock::time_point{}; // long past: due whenever the caller looks
    }
    std::optional<Clock::time_point> next;
    if (m_state == State::connecting) {
        next = m_connect_deadline;
    }
    for (const auto& pending : m_pending) {
        if (pending.deadline && (!next || *pending.deadline < *next)) {
            next = pending.deadline;
        }
    }
    return next;
}

void AsyncRedis::on_time(Clock::time_point now)
{
    if (m_context != nullptr) {
        for (const auto& pending : m_pending) {
            if (pending.deadline && *pending.deadline <= now) {
                const bool connecting = m_state == State::connecting;
                const auto why = connecting ? RedisFailure::cannot_connect : RedisFailure::timed_out;
                const auto error =
                    fmt::format("{} within {:g} s", connecting ? "no connection" : "no answer",
                                std::chrono::duration<double>(m_timeout).count());
                close(why, error);
                went_down(why, error);
                break;
            }
        }
    }
    deliver();
}

// Hands out what arrived, outside hiredis's own calls, so that a callback may do anything.
void AsyncRedis::deliver()
{
    if (m_delivering) {
        return;
    }
    m_delivering = true;
    while (!m_arrived.empty() || m_down) {
        if (m_arrived.empty()) {
            const auto down = *std::exchange(m_down, std::nullopt);
            if (m_on_down) {
                m_on_down(down.why, down.error);
            }
            continue;
        }
        auto arrived = std::move(m_arrived.front());
        m_arrived.pop_front();
        if (arrived.pending == m_pending.end()) {
            continue;
        }
        auto& pending = *arrived.pending;
        if (arrived.result.reply && arrived.result.reply->is_unknown_script() &&
            !pending.by_source && m_context != nullptr) {
            // Redis forgot the script (SCRIPT FLUSH): this once, its text goes along.
            pending.by_source = true;
            submit(arrived.pending);
            continue;
        }
        auto done = std::move(pending.done);
        m_pending.erase(arrived.pending);
        if (done) {
            done(std::move(arrived.result));
        }
    }
    m_delivering = false;
}

} // namespace gpusched::queue
