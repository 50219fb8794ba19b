#pragma once

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

namespace gpusched::sys {

// poll's timeout for a wait of `left` (none: no limit): whole milliseconds, never negative.
// poll takes an int: a wait longer than it can say (about 24.8 days: --timeout 30d) is
// waited for in turns of its longest, the caller looking again after each.
inline int poll_timeout(std::optional<std::chrono::milliseconds> left)
{
    if (!left) {
        return -1;
    }
    return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(
        left->count(), 0, std::numeric_limits<int>::max()));
}

} // namespace gpusched::sys
