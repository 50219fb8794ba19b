#pragma once

#include <gpusched/queue/redis/redis_client.hpp>
#include <gpusched/queue/submission.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace gpusched::queue {

// How a submitter reaches Redis, at the start and again after a lost
// connection: a try at once, then tries after pauses of 0.1 s doubling to 2 s, until
// `give_up_after` (--connect-timeout) has passed since the first. Each try is cut short by the
// time left (though given at least 0.2 s), so a host that drops packets costs no more than one
// that refuses. Then it gives up: a client that waited forever on a mistyped address or a
// server that is gone would never tell its user.
struct RetryPolicy {
    std::chrono::milliseconds give_up_after{10'000};
    std::chrono::milliseconds first_pause{100};
    std::chrono::milliseconds longest_pause{2'000};
    std::chrono::milliseconds shortest_try{200};
};

// "10 s", "0.5 s".
inline std::string describe_seconds(std::chrono::milliseconds duration)
{
    return fmt::format("{} s", static_cast<double>(duration.count()) / 1000.0);
}

// A connection to Redis, made and made again under a RetryPolicy. `timeout` bounds each
// command (and each step of connecting while time is left).
class RedisConnection {
public:
    RedisConnection(RedisUrl url, std::chrono::milliseconds timeout, RetryPolicy policy)
        : m_redis(std::move(url), timeout), m_timeout(timeout), m_policy(policy)
    {
    }

    RedisClient& client() { return m_redis; }
    const RetryPolicy& policy() const { return m_policy; }
    std::string address() const { return describe_redis_url(m_redis.url()); }

    // Connects under the policy; when it gives up, why, naming the address (`unreachable`).
    // A password Redis refuses is `refused` at once: trying again would not change it.
    Result<void> connect()
    {
        auto connected = connect_within_policy();
        if (connected || connected.kind() == FailureKind::refused) {
            return connected;
        }
        return Failure{FailureKind::unreachable,
                       fmt::format("cannot reach Redis at {} within {} (--connect-timeout): {}",
                                   address(), describe_seconds(m_policy.give_up_after),
                                   connected.message())};
    }

    // Runs `operation` (which returns a Result) until it succeeds, and returns its value. A
    // connection lost (a failure of kind `unreachable`) is made again under the policy
    // (QueueUnreachable when it gives up, QueueRefused when Redis refuses the password), and
    // then `reconnected()` is called, which may find that the queue is not what it was, before
    // `operation` is tried again: operations given here must be safe to repeat. Any other
    // failure (an error reply) is thrown, as trying again would get the same answer.
    template <class Operation, class Reconnected>
    auto with_retry(Operation operation, Reconnected reconnected)
    {
        std::string lost; // why the connection went, for the message when it cannot be made again
        while (true) {
            if (!m_redis.connected()) {
                if (auto again = connect_within_policy(); !again) {
                    if (again.kind() == FailureKind::refused) {
                        throw QueueRefused(again.message());
                    }
                    throw QueueUnreachable(fmt::format(
                        "lost the connection to Redis at {}{} and could not connect again "
                        "within {} (--connect-timeout): {}",
                        address(), lost.empty() ? "" : fmt::format(" ({})", lost),
                        describe_seconds(m_policy.give_up_after), again.message()));
                }
                reconnected();
            }
            auto result = operation();
            if (result) {
                if constexpr (std::is_same_v<decltype(result), Result<void>>) {
                    return;
                } else {
                    return std::move(*result);
                }
            }
            if (result.kind() != FailureKind::unreachable) {
                throw_redis_failure(address(), result.failure());
            }
            lost = without_prefix(result.message(), "lost the connection to Redis: ");
            m_redis.close(); // already, where the client found it unreachable
        }
    }

private:
    // Tries until the policy gives up, or Redis refuses the password; the last try's failure
    // then.
    Result<void> connect_within_policy()
    {
        using Clock = std::chrono::steady_clock;
        const auto deadline = Clock::now() + m_policy.give_up_after;
        auto pause = m_policy.first_pause;
        bool warned = false;
        while (true) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            auto tried = try_once(std::max(left, m_policy.shortest_try));
            if (tried) {
                if (warned) {
                    spdlog::info("connected to {}", address());
                }
                return tried;
            }
            const auto now = Clock::now();
            if (now >= deadline || tried.kind() == FailureKind::refused) {
                return tried;
            }
            if (!std::exchange(warned, true)) {
                spdlog::warn("cannot reach Redis at {}: {}; trying again for up to {}", address(),
                             tried.message(), describe_seconds(m_policy.give_up_after));
            }
            std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
            pause = std::min(pause * 2, m_policy.longest_pause);
        }
    }

    // One try within `limit`; why it failed, without the address the messages repeat.
    Result<void> try_once(std::chrono::milliseconds limit)
    {
        // A client waits up to its timeout for each of its two steps: the TCP connection, then
        // the answer to its login. With less time left than m_redis could take, a client
        // bounded by the time left asks first, and m_redis connects once that one was answered.
        if (limit < 2 * m_timeout) {
            RedisClient quick(m_redis.url(), limit / 2);
            if (auto connected = quick.connect(); !connected) {
                return without_address(connected.failure());
            }
        }
        if (auto connected = m_redis.connect(); !connected) {
            return without_address(connected.failure());
        }
        return {};
    }

    Failure without_address(const Failure& failure) const
    {
        return Failure{failure.kind, without_prefix(failure.message, connect_prefix()),
                       failure.error};
    }

    std::string connect_prefix() const { return fmt::format("cannot connect to {}: ", address()); }

    static std::string without_prefix(const std::string& error, const std::string& prefix)
    {
        return error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
    }

    RedisClient m_redis;
    std::chrono::milliseconds m_timeout;
    RetryPolicy m_policy;
};

} // namespace gpusched::queue
