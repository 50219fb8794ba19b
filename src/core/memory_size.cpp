#include <gpusched/memory_size.hpp>

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace gpusched {
namespace {

constexpr std::uint64_t k_kib = 1024;

// The power of 1024 a unit's letter stands for; 0 for a letter that is none.
unsigned power_of(char letter)
{
    switch (std::tolower(static_cast<unsigned char>(letter))) {
    case 'k':
        return 1;
    case 'm':
        return 2;
    case 'g':
        return 3;
    case 't':
        return 4;
    default:
        return 0;
    }
}

bool is_unit_tail(std::string_view tail)
{
    const auto lower = [&tail](std::size_t i) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(tail[i])));
    };
    return tail.empty() || (tail.size() == 1 && lower(0) == 'b') ||
           (tail.size() == 2 && lower(0) == 'i' && lower(1) == 'b');
}

} // namespace

Result<std::uint64_t> parse_memory_size(std::string_view text)
{
    const auto invalid = [&text](std::string_view why) {
        return Failure{
            fmt::format("\"{}\" is not a size of memory ({}; e.g. 20G, 8000M)", text, why)};
    };
    std::size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.')) {
        ++digits;
    }
    const auto number = text.substr(0, digits);
    if (number.empty() || number.front() == '.' || number.back() == '.' ||
        number.find('.') != number.rfind('.')) {
        return invalid("a size is a number, then its unit");
    }
    if (digits == text.size()) {
        return invalid("a unit is needed after the number");
    }
    const unsigned power = power_of(text[digits]);
    if (power == 0 || !is_unit_tail(text.substr(digits + 1))) {
        return invalid("its unit is K, M, G or T");
    }
    // Whole digits are exact; a fraction is rounded up to the byte. More than 15 significant
    // digits is beyond any size that can be asked for, and beyond what a double keeps.
    if (number.size() > 16) {
        return invalid("at most 1024T");
    }
    double value = 0; // from_chars: the C locale's decimal point, whatever the user's
    std::from_chars(number.data(), number.data() + number.size(), value);
    const double bytes = std::ceil(value * std::pow(static_cast<double>(k_kib), power));
    if (bytes <= 0) {
        return invalid("more than 0 is needed");
    }
    if (bytes > static_cast<double>(k_most_job_memory)) {
        return invalid("at most 1024T");
    }
    return static_cast<std::uint64_t>(bytes);
}

std::string format_memory_size(std::uint64_t bytes)
{
    static constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    double value = static_cast<double>(bytes);
    while (unit + 1 < units.size() && value >= static_cast<double>(k_kib)) {
        value /= static_cast<double>(k_kib);
        ++unit;
    }
    // One decimal where it says something: 1.5 GiB, but 20 GiB and 800 MiB.
    const double tenths = std::round(value * 10) / 10;
    if (unit == 0 || tenths == std::floor(tenths) || tenths >= 100) {
        return fmt::format("{:.0f} {}", std::round(value), units[unit]);
    }
    return fmt::format("{:.1f} {}", tenths, units[unit]);
}

} // namespace gpusched
