#pragma once

#include <gpusched/errors.hpp>

#include <string_view>

namespace gpusched {

// The longest duration any option takes, in seconds: a year, beyond any real timeout and far
// below where milliseconds would overflow.
inline constexpr double k_longest_seconds = 365.0 * 24 * 3600;

// A duration as every option takes it, in seconds: plain seconds (`30`, `1.5`, `2e3`) or
// numbers with units, s, m, h and d, one after another (`30s`, `90m`, `1.5h`, `1h30m`, `2d`),
// in the C locale. It must be more than 0 (at least 0 where `zero_allowed`: at once) and at
// most `most`. The error says what is wrong in words, without the option's name: either
// "'5x' is not a duration (use 30s, 90m, 1h or 2d)" or "must be more than 0 s, not '-1'",
// which the caller puts after the name, with a colon before the first kind only.
Result<double> parse_duration(std::string_view text, bool zero_allowed,
                              double most = k_longest_seconds);

// The message for a bad value of `option`: "--timeout: '5x' is not a duration (...)" or
// "--timeout must be more than 0 s, not '0'".
std::string option_error(std::string_view option, std::string_view message);

} // namespace gpusched
