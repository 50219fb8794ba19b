#pragma once

#include <chrono>

namespace gpusched {

// Wall-clock time as job logs and lease records write it: seconds since the epoch.
inline double
seconds_since_epoch(std::chrono::system_clock::time_point time = std::chrono::system_clock::now())
{
    return std::chrono::duration<double>(time.time_since_epoch()).count();
}

} // namespace gpusched
