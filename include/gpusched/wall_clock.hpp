#pragma once

#include <chrono>
#include <ctime>

namespace gpusched {

// Wall-clock time as job logs and lease records write it: seconds since the epoch.
inline double
seconds_since_epoch(std::chrono::system_clock::time_point time = std::chrono::system_clock::now())
{
    return std::chrono::duration<double>(time.time_since_epoch()).count();
}

// The broken-down local time of `seconds` since the epoch, for printing.
inline std::tm local_time_of(double seconds)
{
    const auto whole = static_cast<std::time_t>(seconds);
    std::tm local{};
    localtime_r(&whole, &local);
    return local;
}

} // namespace gpusched
