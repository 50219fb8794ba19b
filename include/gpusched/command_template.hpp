#pragma once

#include <gpusched/errors.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// A hypersearch command template such as "python3 train.py --lr {lr} --bs {bs}".
// `{name}` (a C identifier) is a placeholder; `{{` and `}}` are literal braces; braces
// around anything else (`awk '{print $1}'`) and shell syntax `${NAME}` are left as written.
class CommandTemplate {
public:
    static Result<CommandTemplate> parse(std::string_view text);

    // Placeholder names in order of first appearance, each once.
    const std::vector<std::string>& names() const { return m_names; }

    // The command with each placeholder replaced; values[i] belongs to names()[i].
    void render(const std::vector<std::string_view>& values, std::string& out) const;

private:
    struct Segment {
        std::string literal;    // text before the placeholder
        std::size_t name_index; // index into m_names, or npos after the last placeholder
    };

    std::vector<Segment> m_segments;
    std::vector<std::string> m_names;
};

// Quotes `value` for /bin/sh when it holds anything but plain characters: it's -> 'it'\''s'.
std::string shell_quote(std::string_view value);

} // namespace gpusched
