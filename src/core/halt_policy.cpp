#include <gpusched/halt_policy.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace gpusched {

Result<HaltPolicy> HaltPolicy::parse(std::string_view text)
{
    HaltPolicy policy;
    if (text == "never") {
        return policy;
    }
    const auto bad = Failure{fmt::format(
        "bad --halt '{}': expected never, or soon|now,fail|success|done=N or =P% (e.g. now,fail=1)",
        text)};
    const auto comma = text.find(',');
    const auto equals = text.find('=');
    if (comma == std::string_view::npos || equals == std::string_view::npos || equals < comma) {
        return bad;
    }
    const auto when = text.substr(0, comma);
    const auto why = text.substr(comma + 1, equals - comma - 1);
    auto limit = text.substr(equals + 1);
    if (when == "soon") {
        policy.when = When::soon;
    } else if (when == "now") {
        policy.when = When::now;
    } else {
        return bad;
    }
    if (why == "fail") {
        policy.why = Why::fail;
    } else if (why == "success") {
        policy.why = Why::success;
    } else if (why == "done") {
        policy.why = Why::done;
    } else {
        return bad;
    }
    if (!limit.empty() && limit.back() == '%') {
        policy.percent = true;
        limit.remove_suffix(1);
    }
    // A count of jobs is whole; a share is a finite percentage (nan would never be reached).
    std::optional<double> number;
    if (policy.percent) {
        number = parse_number<double>(limit);
    } else if (const auto count = parse_number<std::uint32_t>(limit)) {
        number = *count;
    }
    if (!number || !std::isfinite(*number) || *number <= 0 || (policy.percent && *number > 100)) {
        return bad;
    }
    policy.limit = *number;
    return policy;
}

bool HaltPolicy::reached(std::size_t succeeded, std::size_t failed) const
{
    if (when == When::never) {
        return false;
    }
    const std::size_t counted = why == Why::fail      ? failed
                                : why == Why::success ? succeeded
                                                      : succeeded + failed;
    if (!percent) {
        return static_cast<double>(counted) >= limit;
    }
    const std::size_t finished = succeeded + failed;
    return finished > 0 &&
           100.0 * static_cast<double>(counted) / static_cast<double>(finished) >= limit;
}

} // namespace gpusched
