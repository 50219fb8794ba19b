#include <gpusched/spawn_backoff.hpp>

#include <algorithm>
#include <utility>

namespace gpusched {

bool SpawnBackoff::refused(Clock::time_point now)
{
    ++m_deferred;
    if (m_retry_at) {
        return false;
    }
    m_wait = m_wait == std::chrono::milliseconds{} ? k_first : std::min(m_wait * 2, k_longest);
    m_retry_at = now + m_wait;
    return true;
}

bool SpawnBackoff::started()
{
    return std::exchange(m_wait, {}) != std::chrono::milliseconds{};
}

bool SpawnBackoff::due(Clock::time_point now)
{
    if (!m_retry_at || now < *m_retry_at) {
        return false;
    }
    m_retry_at.reset();
    return true;
}

} // namespace gpusched
