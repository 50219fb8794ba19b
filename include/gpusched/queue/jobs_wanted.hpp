#pragma once

#include <gpusched/queue/job_record.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::queue {

// What a shell's completion asks of a queue: the newest jobs in some states whose id or label
// begins with what is typed, few enough to offer. One rule for both stores: each narrows its
// read as it can, and keeps the jobs wants() takes.
struct JobsWanted {
    std::vector<JobState> states; // none: every state
    // What the id (12), the label (sweep) or USER/LABEL (ann/sweep) begins with; "" for any.
    std::string prefix;
    // Only the jobs of this user, and those queued before submitters were recorded (as a
    // label names them); every user's when none.
    std::optional<std::string> user;
    std::size_t most = 100;

    bool wants(const JobRecord& job) const;
};

// The ids from `last` down to 1 whose decimal digits begin with `digits`, highest first, a
// block at a time: what a store that is asked by id alone (Redis) looks through for the
// jobs typed so far. Every id for "", none for what is no id's beginning ("0", "a").
class IdsBeginningWith {
public:
    IdsBeginningWith(std::int64_t last, std::string_view digits);

    // The next `count` of them; fewer, then none, at the end.
    std::vector<std::int64_t> next(std::size_t count);

private:
    // The ids of one length are one range, [m_low, m_high] from m_next down; a shorter
    // length's range comes next, with one digit fewer after the prefix.
    std::int64_t m_prefix = 0;
    std::int64_t m_last = 0;
    std::int64_t m_scale = 0; // 10^(digits after the prefix) of the range at hand; 0: done
    std::int64_t m_next = 0;
    std::int64_t m_low = 0;
    void enter_range();
};

} // namespace gpusched::queue
