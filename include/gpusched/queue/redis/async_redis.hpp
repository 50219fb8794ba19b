#pragma once

#include <gpusched/queue/redis/redis_command.hpp>
#include <gpusched/redis_url.hpp>

#include <poll.h>

#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <vector>

struct redisAsyncContext;

namespace gpusched::queue {

// What became of a command: Redis's reply, or why there is none.
struct RedisResult {
    std::optional<RedisReply> reply;
    RedisFailure failure = RedisFailure::lost; // when there is no reply, or it is an error
    std::string error;                         // in words, for the log

    bool ok() const { return reply && !reply->is_error(); }
};

// One connection to Redis through hiredis's asynchronous API, driven by the caller's poll: it
// never blocks, whatever Redis does. Connecting, logging in (AUTH, SELECT) and loading the
// protocol's scripts happen in the background; every command but a blocking one must be
// answered within the timeout, or the connection is closed as timed out. A command's `done`
// is called from on_ready() or on_time() (never from within send), with its reply or the
// failure that ended the connection; it may send, or close, as it likes.
class AsyncRedis {
public:
    using Clock = std::chrono::steady_clock;
    using Done = std::function<void(RedisResult)>;
    enum class State { closed, connecting, ready };

    AsyncRedis(RedisUrl url, std::chrono::milliseconds timeout,
               std::vector<const LuaScript*> scripts);
    ~AsyncRedis();
    AsyncRedis(const AsyncRedis&) = delete;
    AsyncRedis& operator=(const AsyncRedis&) = delete;

    State state() const { return m_state; }
    bool ready() const { return m_state == State::ready; }
    const RedisUrl& url() const { return m_url; }

    // Starts connecting; `on_up` hears when it is ready, `on_down` when it closes (a failed
    // attempt, a broken connection, a timeout; not a close() of ours).
    void connect(std::function<void()> on_up,
                 std::function<void(RedisFailure, const std::string&)> on_down);
    // Every command still waiting gets `why`.
    void close(RedisFailure why = RedisFailure::lost, const std::string& error = "closed");

    // Only while ready. `blocking` commands (BLMOVE with no timeout) have no deadline.
    void send(const RedisCommand& command, Done done, bool blocking = false);
    std::size_t waiting() const { return m_pending.size(); }

    void add_poll_fds(std::vector<pollfd>& fds) const;
    bool on_ready(const pollfd& ready);
    std::optional<Clock::time_point> next_deadline() const;
    void on_time(Clock::time_point now);

private:
    struct Pending {
        AsyncRedis* owner;
        RedisCommand command;
        Done done;
        std::optional<Clock::time_point> deadline;
        bool by_source = false;
    };
    struct Down {
        RedisFailure why;
        std::string error;
    };
    struct Arrived {
        std::list<Pending>::iterator pending;
        RedisResult result;
    };

    static void on_reply(redisAsyncContext* context, void* reply, void* data);
    static void on_connected(const redisAsyncContext* context, int status);
    static void on_disconnected(const redisAsyncContext* context, int status);

    void submit(std::list<Pending>::iterator pending);
    void log_in();
    void deliver();
    void went_down(RedisFailure why, const std::string& error);

    RedisUrl m_url;
    std::chrono::milliseconds m_timeout;
    std::vector<const LuaScript*> m_scripts;
    redisAsyncContext* m_context = nullptr;
    State m_state = State::closed;
    Clock::time_point m_connect_deadline{};
    bool m_wants_read = false;
    bool m_wants_write = false;
    std::list<Pending> m_pending;
    std::deque<Arrived> m_arrived;
    bool m_delivering = false;
    std::optional<Down> m_down; // to tell on_down, once what arrived is delivered
    // Why the connection is going away, for the commands it takes with it.
    RedisFailure m_closing_why = RedisFailure::lost;
    std::string m_closing_error;
    std::function<void()> m_on_up;
    std::function<void(RedisFailure, const std::string&)> m_on_down;

    friend struct EventHooks;
};

} // namespace gpusched::queue
