#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace gpusched {

// The wait after the system refuses to start a job (a fork limit, a lack of memory): every job
// started at once would fail too, and use up its --retries in an instant, so nothing starts
// until the wait is over. It doubles while the system keeps refusing (100 ms, 200 ms, ... up to
// 10 s), and a job that starts ends it.
class SpawnBackoff {
public:
    using Clock = std::chrono::steady_clock;

    static constexpr std::chrono::milliseconds k_first{100};
    static constexpr std::chrono::milliseconds k_longest{10'000};

    // A start was refused at `now`: the job waits. True when this began a wait; a refusal
    // while one is on (another job of the same batch) adds none.
    bool refused(Clock::time_point now);
    // A job started. True when that ended a spell of refusals: the next wait is the first.
    bool started();
    // When jobs may start again, while a wait is on.
    std::optional<Clock::time_point> retry_at() const { return m_retry_at; }
    // True once, when the wait is over at `now`.
    bool due(Clock::time_point now);
    // Starts put off, in all.
    std::size_t deferred() const { return m_deferred; }

private:
    std::optional<Clock::time_point> m_retry_at;
    std::chrono::milliseconds m_wait{}; // the last wait; zero when no start was refused since
    std::size_t m_deferred = 0;
};

} // namespace gpusched
