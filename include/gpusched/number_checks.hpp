#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <string_view>

namespace gpusched {

// A whole number in decimal digits (no sign, no octal or hexadecimal), from `least` to `most`.
Result<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t least,
                                         std::uint64_t most);
// A whole number that may be negative (a '-' then decimal digits), from `least` to `most`.
Result<std::int64_t> parse_integer(std::string_view text, std::int64_t least, std::int64_t most);

} // namespace gpusched
