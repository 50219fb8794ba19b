#include <gpusched/number_checks.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <limits>

namespace gpusched {
namespace {

// The value as the user wrote it, cut short if it is very long.
std::string quoted(std::string_view text)
{
    constexpr std::size_t k_shown = 40;
    if (text.size() <= k_shown) {
        return std::string(text);
    }
    return fmt::format("{}... ({} characters)", text.substr(0, k_shown), text.size());
}

} // namespace

Result<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t least,
                                         std::uint64_t most)
{
    // Past 2^63 a bound is no bound the user needs to read.
    const auto range = most >= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                           ? fmt::format("at least {}", least)
                           : fmt::format("from {} to {}", least, most);
    const bool digits_only =
        !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
    const auto value = digits_only ? parse_number<std::uint64_t>(text) : std::nullopt;
    if (!value || *value < least || *value > most) {
        return Failure{fmt::format("{} is {}: must be a whole number {}", quoted(text),
                                   digits_only ? "out of range" : "not a whole number", range)};
    }
    return *value;
}

Result<std::int64_t> parse_integer(std::string_view text, std::int64_t least, std::int64_t most)
{
    const bool negative = text.starts_with('-');
    const auto digits = negative ? text.substr(1) : text;
    const bool digits_only =
        !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    const auto value = digits_only ? parse_number<std::int64_t>(text) : std::nullopt;
    if (!value || *value < least || *value > most) {
        return Failure{fmt::format("{} is {}: must be a whole number from {} to {}", quoted(text),
                                   digits_only ? "out of range" : "not a whole number", least,
                                   most)};
    }
    return *value;
}

} // namespace gpusched
