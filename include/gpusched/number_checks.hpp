#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <string_view>

namespace gpusched {

// The longest duration any option takes, in seconds: a year, beyond any real timeout and far
// below where milliseconds would overflow.
inline constexpr double k_longest_seconds = 365.0 * 24 * 3600;

// A number of seconds as an option takes it: decimal (1.5, 2e3) in the C locale, finite,
// more than 0 (or at least 0 where `zero_allowed`) and at most `most`. The error names the
// value and the accepted range.
Parsed<double> parse_seconds(std::string_view text, bool zero_allowed,
                             double most = k_longest_seconds);

// A whole number in decimal digits (no sign, no octal or hexadecimal), from `least` to `most`.
Parsed<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t least,
                                         std::uint64_t most);

} // namespace gpusched
