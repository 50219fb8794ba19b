#pragma once

#include <gpusched/queue/redis_client.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

namespace gpusched::cli {

// Connects, trying again with a growing pause (0.1 s doubling to 5 s) until it works: a
// command-line client started before Redis, or cut off by its restart, simply waits for it.
inline void reconnect(queue::RedisClient& redis)
{
    auto pause = std::chrono::milliseconds(100);
    bool logged = false;
    while (!redis.connect()) {
        if (!std::exchange(logged, true)) {
            spdlog::warn("{}; trying again until it answers", redis.error());
        }
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(5));
    }
    if (logged) {
        spdlog::info("connected to {}", describe_redis_url(redis.url()));
    }
}

// Runs `operation` (which returns an optional) until it gives a value, reconnecting between
// tries; operations given here must be safe to repeat.
template <class Operation>
auto with_retry(queue::RedisClient& redis, Operation operation)
{
    while (true) {
        if (!redis.connected()) {
            reconnect(redis);
        }
        if (auto result = operation()) {
            return *result;
        }
        if (redis.connected()) {
            // Redis answered with an error: trying again would get the same answer.
            throw std::runtime_error(
                fmt::format("{}: {}", describe_redis_url(redis.url()), redis.error()));
        }
    }
}

} // namespace gpusched::cli
