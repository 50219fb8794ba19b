#include <gpusched/queue/jobs_wanted.hpp>

#include <algorithm>
#include <cctype>

namespace gpusched::queue {

bool JobsWanted::wants(const JobRecord& job) const
{
    if (!states.empty() && std::find(states.begin(), states.end(), job.state) == states.end()) {
        return false;
    }
    // A job queued before submitters were recorded is anyone's, as a label's jobs are.
    if (user && !job.submitter.user.empty() && job.submitter.user != *user) {
        return false;
    }
    if (prefix.empty() || std::to_string(job.id).starts_with(prefix)) {
        return true;
    }
    return !job.name.empty() && (job.name.starts_with(prefix) ||
                                 (job.submitter.user + "/" + job.name).starts_with(prefix));
}

namespace {

// Ids stay far below this; keeping to it, (prefix + 1) * 10^k never overflows.
constexpr std::int64_t k_largest_id = 999'999'999'999'999'999;

int digits_of(std::int64_t number)
{
    int digits = 1;
    for (; number >= 10; number /= 10) {
        ++digits;
    }
    return digits;
}

} // namespace

IdsBeginningWith::IdsBeginningWith(std::int64_t last, std::string_view digits)
    : m_last(std::min(last, k_largest_id))
{
    if (m_last < 1) {
        return;
    }
    if (digits.empty()) {
        // Every id: one range, of the ids of every length.
        m_scale = 1;
        m_low = 1;
        m_next = m_last;
        return;
    }
    const bool number =
        digits.front() != '0' && std::all_of(digits.begin(), digits.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
    const int after = digits_of(m_last) - static_cast<int>(digits.size());
    if (!number || after < 0) {
        return;
    }
    m_prefix = std::stoll(std::string(digits));
    m_scale = 1;
    for (int i = 0; i < after; ++i) {
        m_scale *= 10;
    }
    enter_range();
}

void IdsBeginningWith::enter_range()
{
    // The longest ids first: PREFIX followed by as many digits as `last` has room for, then
    // one fewer, down to PREFIX itself.
    for (; m_scale > 0; m_scale /= 10) {
        m_low = m_prefix * m_scale;
        if (m_low <= m_last) {
            m_next = std::min((m_prefix + 1) * m_scale - 1, m_last);
            return;
        }
    }
}

std::vector<std::int64_t> IdsBeginningWith::next(std::size_t count)
{
    std::vector<std::int64_t> ids;
    while (ids.size() < count && m_scale > 0) {
        if (m_next >= m_low) {
            ids.push_back(m_next--);
            continue;
        }
        if (m_prefix == 0) {
            m_scale = 0; // every id: the one range is done
            break;
        }
        m_scale /= 10;
        enter_range();
    }
    return ids;
}

} // namespace gpusched::queue
