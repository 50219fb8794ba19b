#include <gpusched/queue/failure_spell.hpp>

#include <algorithm>
#include <utility>

namespace gpusched::queue {

FailureSpell::FailureSpell(std::chrono::milliseconds first, std::chrono::milliseconds longest)
    : m_first(first), m_longest(longest), m_backoff(first)
{
}

bool FailureSpell::failed(Clock::time_point now, std::string_view what)
{
    const bool begins = !m_since;
    if (begins) {
        m_since = now;
        m_what = what;
    }
    if (!m_retry_at) {
        m_retry_at = now + m_backoff;
        m_backoff = std::min(m_backoff * 2, m_longest);
    }
    return begins;
}

std::optional<FailureSpell::Clock::duration> FailureSpell::ended(Clock::time_point now)
{
    m_backoff = m_first;
    m_retry_at.reset();
    if (!m_since) {
        return std::nullopt;
    }
    const auto lasted = now - *std::exchange(m_since, std::nullopt);
    return lasted;
}

} // namespace gpusched::queue
