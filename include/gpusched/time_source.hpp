#pragma once

#include <chrono>

namespace gpusched {

// The clocks the runner's rules read, behind an interface so that a test of those rules runs
// on a time of its own: a --timeout of an hour passes at once, and no loaded machine makes a
// deadline late.
class TimeSource {
public:
    virtual ~TimeSource() = default;
    // For deadlines and run times: never goes back.
    virtual std::chrono::steady_clock::time_point now() const = 0;
    // For what is written down: a job's start in its log.
    virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

// The system's clocks.
class SystemTime final : public TimeSource {
public:
    std::chrono::steady_clock::time_point now() const override
    {
        return std::chrono::steady_clock::now();
    }
    std::chrono::system_clock::time_point wall_now() const override
    {
        return std::chrono::system_clock::now();
    }
};

// The one SystemTime of the process, for the runner and its input to share.
inline const TimeSource& system_time()
{
    static const SystemTime time;
    return time;
}

} // namespace gpusched
