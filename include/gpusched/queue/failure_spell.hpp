#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched::queue {

// A spell of failures of a worker's store (a database that cannot be written, a Redis that
// does not answer): said once when it begins and once when it ends, never at every try, and
// tried again meanwhile after a back-off that doubles from `first` up to `longest` (a fixed
// period when the two are equal) and that only the end of the spell resets. Time is passed
// in.
class FailureSpell {
public:
    using Clock = std::chrono::steady_clock;

    FailureSpell(std::chrono::milliseconds first, std::chrono::milliseconds longest);

    // `what` failed at `now`: the next try is due after the back-off, unless one is due
    // already. True when this begins a spell, which the caller then says.
    bool failed(Clock::time_point now, std::string_view what);
    // What worked at `now` ends the spell: how long it lasted (the caller says so), or
    // nothing when there was none. The back-off starts again from `first`.
    std::optional<Clock::duration> ended(Clock::time_point now);

    bool failing() const { return m_since.has_value(); }
    // What failed first in this spell.
    const std::string& what() const { return m_what; }
    // When to try again, while a try is due.
    std::optional<Clock::time_point> retry_at() const { return m_retry_at; }
    // The try is made now; it ends in failed() or ended().
    void retrying() { m_retry_at.reset(); }
    std::chrono::milliseconds longest() const { return m_longest; }

private:
    std::chrono::milliseconds m_first;
    std::chrono::milliseconds m_longest;
    std::chrono::milliseconds m_backoff;
    std::optional<Clock::time_point> m_since;
    std::optional<Clock::time_point> m_retry_at;
    std::string m_what;
};

} // namespace gpusched::queue
