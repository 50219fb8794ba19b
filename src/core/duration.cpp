#include <gpusched/duration.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

namespace gpusched {
namespace {

constexpr std::string_view k_examples = "use 30s, 90m, 1h or 2d";

struct Unit {
    char suffix;
    double seconds;
};
constexpr std::array<Unit, 4> k_units = {{{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}}};

// The value as the user wrote it, quoted, and cut short if it is very long.
std::string shown(std::string_view text)
{
    constexpr std::size_t k_shown = 40;
    if (text.size() <= k_shown) {
        return fmt::format("'{}'", text);
    }
    return fmt::format("'{}...' ({} characters)", text.substr(0, k_shown), text.size());
}

// "a year (365d)", "60 s": the bound as a person reads it.
std::string in_words(double seconds)
{
    if (seconds == k_longest_seconds) {
        return "a year (365d)";
    }
    return fmt::format("{} s", seconds);
}

enum class Reading { ok, not_a_duration, too_large };

struct Read {
    Reading reading = Reading::not_a_duration;
    double seconds = 0;
};

// Plain seconds, or number-and-unit pairs. Only the first number may carry a sign, so that
// "-1" and "-1h" read as negative durations (refused for their range, not their form).
Read read(std::string_view text)
{
    if (text.empty()) {
        return {};
    }
    double total = 0;
    const char* next = text.data();
    const char* const end = text.data() + text.size();
    bool first = true;
    while (next != end) {
        if (!first && (*next == '-' || *next == '+')) {
            return {};
        }
        if (*next == '+' || std::isspace(static_cast<unsigned char>(*next)) != 0) {
            return {}; // from_chars takes no '+'; no blanks either side
        }
        double number = 0;
        const auto [after, error] = std::from_chars(next, end, number);
        if (error == std::errc::result_out_of_range) {
            // 1e400 is a number, too large to count in; 1e-400 is 0 to any clock.
            const std::string_view spelled(next, static_cast<std::size_t>(after - next));
            return spelled.find("e-") == std::string_view::npos &&
                           spelled.find("E-") == std::string_view::npos
                       ? Read{Reading::too_large, 0}
                       : Read{};
        }
        if (error != std::errc{} || !std::isfinite(number)) {
            return {}; // not a number, or nan or inf
        }
        next = after;
        double unit = 1;
        if (next != end) {
            const auto found = std::find_if(k_units.begin(), k_units.end(),
                                            [&](const Unit& u) { return u.suffix == *next; });
            if (found == k_units.end()) {
                return {};
            }
            unit = found->seconds;
            ++next;
        } else if (!first) {
            return {}; // 1h30: a bare number after a unit is ambiguous
        }
        total += number * unit;
        first = false;
    }
    if (!std::isfinite(total)) {
        return {Reading::too_large, 0};
    }
    return {Reading::ok, total};
}

} // namespace

Result<double> parse_duration(std::string_view text, bool zero_allowed, double most)
{
    const auto value = read(text);
    if (value.reading == Reading::not_a_duration) {
        return Failure{fmt::format("{} is not a duration ({})", shown(text), k_examples)};
    }
    if (value.reading == Reading::too_large || value.seconds > most) {
        return Failure{fmt::format("must be at most {}, not {}", in_words(most), shown(text))};
    }
    if (value.seconds < 0 || (value.seconds == 0 && !zero_allowed)) {
        return Failure{fmt::format("must be {} 0 s, not {}",
                                   zero_allowed ? "at least" : "more than", shown(text))};
    }
    return value.seconds;
}

std::string option_error(std::string_view option, std::string_view message)
{
    return fmt::format("{}{} {}", option, message.starts_with("must ") ? "" : ":", message);
}

} // namespace gpusched
