#include <gpusched/visible_text.hpp>

#include <gpusched/job_messages.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <optional>

namespace gpusched {
namespace {

struct Decoded {
    char32_t code_point = 0;
    std::size_t size = 0; // bytes
};

// The code point that starts `text`, if it starts with well-formed UTF-8 (RFC 3629: no
// overlong form, no surrogate, nothing above U+10FFFF), and it is more than one byte.
std::optional<Decoded> decode_multibyte(std::string_view text)
{
    const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t size = 0;
    char32_t code_point = 0;
    char32_t lowest = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
        size = 2;
        code_point = lead & 0x1f;
        lowest = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        size = 3;
        code_point = lead & 0x0f;
        lowest = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        size = 4;
        code_point = lead & 0x07;
        lowest = 0x10000;
    } else {
        return std::nullopt;
    }
    if (text.size() < size) {
        return std::nullopt;
    }
    for (std::size_t i = 1; i < size; ++i) {
        if ((byte(i) & 0xc0) != 0x80) {
            return std::nullopt;
        }
        code_point = (code_point << 6) | (byte(i) & 0x3f);
    }
    if (code_point < lowest || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
        return std::nullopt;
    }
    return Decoded{code_point, size};
}

// C1 controls, and what reorders a line: the Bidi_Control characters.
bool shown_as_code_point(char32_t code_point)
{
    return (code_point >= 0x80 && code_point <= 0x9f) || code_point == 0x061c ||
           code_point == 0x200e || code_point == 0x200f ||
           (code_point >= 0x202a && code_point <= 0x202e) ||
           (code_point >= 0x2066 && code_point <= 0x2069);
}

// The escape of a byte below 0x80 that is not itself shown, or "" for one that is.
std::string_view named_escape(unsigned char byte)
{
    switch (byte) {
    case '\\':
        return "\\\\";
    case '\a':
        return "\\a";
    case '\b':
        return "\\b";
    case '\t':
        return "\\t";
    case '\n':
        return "\\n";
    case '\v':
        return "\\v";
    case '\f':
        return "\\f";
    case '\r':
        return "\\r";
    case 0x1b:
        return "\\e";
    default:
        return "";
    }
}

} // namespace

std::string visible_text(std::string_view text)
{
    std::string shown;
    shown.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x80) {
            const auto decoded = decode_multibyte(text.substr(i));
            if (!decoded) {
                shown += fmt::format("\\x{:02x}", byte);
                ++i;
            } else if (shown_as_code_point(decoded->code_point)) {
                shown += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(decoded->code_point));
                i += decoded->size;
            } else {
                shown.append(text.substr(i, decoded->size));
                i += decoded->size;
            }
            continue;
        }
        if (const auto escape = named_escape(byte); !escape.empty()) {
            shown += escape;
        } else if (byte < 0x20 || byte == 0x7f) {
            shown += fmt::format("\\x{:02x}", byte);
        } else {
            shown += static_cast<char>(byte);
        }
        ++i;
    }
    return shown;
}

std::string shown_command(std::string_view command)
{
    return visible_text(shorten_command(command));
}

} // namespace gpusched
