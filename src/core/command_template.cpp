#include <gpusched/command_template.hpp>

#include <algorithm>
#include <utility>

namespace gpusched {
namespace {

bool is_identifier_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_identifier_char(char c)
{
    return is_identifier_start(c) || (c >= '0' && c <= '9');
}

// Length of "{name}" at text[at], or 0 if what starts there is not a placeholder.
std::size_t placeholder_length(std::string_view text, std::size_t at)
{
    if (at + 2 >= text.size() || !is_identifier_start(text[at + 1])) {
        return 0;
    }
    std::size_t end = at + 2;
    while (end < text.size() && is_identifier_char(text[end])) {
        ++end;
    }
    return end < text.size() && text[end] == '}' ? end + 1 - at : 0;
}

} // namespace

Result<CommandTemplate> CommandTemplate::parse(std::string_view text)
{
    CommandTemplate parsed;
    std::string literal;
    for (std::size_t at = 0; at < text.size();) {
        const char c = text[at];
        if ((c == '{' || c == '}') && at + 1 < text.size() && text[at + 1] == c) {
            literal += c;
            at += 2;
            continue;
        }
        const bool shell_parameter = at > 0 && text[at - 1] == '$';
        const std::size_t length = c == '{' && !shell_parameter ? placeholder_length(text, at) : 0;
        if (length == 0) {
            literal += c;
            ++at;
            continue;
        }
        const std::string name(text.substr(at + 1, length - 2));
        const auto known = std::find(parsed.m_names.begin(), parsed.m_names.end(), name);
        const std::size_t index = static_cast<std::size_t>(known - parsed.m_names.begin());
        if (known == parsed.m_names.end()) {
            parsed.m_names.push_back(name);
        }
        parsed.m_segments.push_back(Segment{std::exchange(literal, {}), index});
        at += length;
    }
    parsed.m_segments.push_back(Segment{std::move(literal), std::string::npos});
    if (parsed.m_names.empty()) {
        return Failure{"the template has no {name} placeholder"};
    }
    return parsed;
}

void CommandTemplate::render(const std::vector<std::string_view>& values, std::string& out) const
{
    for (const auto& segment : m_segments) {
        out += segment.literal;
        if (segment.name_index != std::string::npos) {
            out += values[segment.name_index];
        }
    }
}

std::string shell_quote(std::string_view value)
{
    const bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return is_identifier_char(c) ||
               std::string_view("@%+=:,./-").find(c) != std::string_view::npos;
    });
    if (plain) {
        return std::string(value);
    }
    std::string quoted = "'";
    for (const char c : value) {
        if (c == '\'') {
            quoted += "'\\''";
        } else {
            quoted += c;
        }
    }
    quoted += '\'';
    return quoted;
}

} // namespace gpusched
