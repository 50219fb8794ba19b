#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace gpusched {

// The number `text` spells, if the whole of it is one (no sign for unsigned types, no
// leading or trailing characters), in the C locale whatever the user's.
template <class Number>
std::optional<Number> parse_number(std::string_view text)
{
    Number value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

} // namespace gpusched
