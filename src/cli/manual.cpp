#include "manual.hpp"

#include "help_format.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/split.hpp>
#include <gpusched/version.hpp>

#include <fmt/format.h>

#include <map>
#include <utility>

namespace gpusched::cli {
namespace {

constexpr std::string_view k_options_marker = ".\\\" @OPTIONS ";
constexpr std::string_view k_environment_marker = ".\\\" @ENVIRONMENT@";
constexpr std::string_view k_queue_options_marker = ".\\\" @QUEUE OPTIONS@";
// The command whose queue options the manual lists once: it has all of them.
constexpr std::string_view k_queue_options_command = "submit";
// mandoc -Tlint asks for input lines of at most 80 bytes.
constexpr std::size_t k_widest_line = 80;

// Text for roff: backslashes escaped, hyphens as minus signs (so they copy and search as
// typed), `code` as help writes it in bold, and nothing at the start of a line that roff
// would take for a request.
std::string roff(std::string_view text)
{
    std::string escaped;
    bool in_code = false;
    for (const char c : text) {
        if (c == '\\') {
            escaped += "\\e";
        } else if (c == '-') {
            escaped += "\\-";
        } else if (c == '\n') {
            escaped += ' ';
        } else if (c == '`') {
            escaped += in_code ? "\\fR" : "\\fB";
            in_code = !in_code;
        } else {
            escaped += c;
        }
    }
    if (in_code) {
        escaped += "\\fR";
    }
    if (!escaped.empty() && (escaped.front() == '.' || escaped.front() == '\'')) {
        escaped.insert(0, "\\&");
    }
    return escaped;
}

// A text line of more than k_widest_line bytes as several, broken at spaces (never after a
// backslash, which would escape the newline); a piece that would start like a request is
// guarded with \&. Filled text reads the same, and searches find words whole.
std::string wrapped(std::string_view line)
{
    std::string text;
    while (line.size() > k_widest_line) {
        auto space = line.rfind(' ', k_widest_line);
        while (space != std::string_view::npos && space > 0 && line[space - 1] == '\\') {
            space = line.rfind(' ', space - 1);
        }
        if (space == std::string_view::npos || space == 0) {
            space = line.find(' ', k_widest_line);
            while (space != std::string_view::npos && line[space - 1] == '\\') {
                space = line.find(' ', space + 1);
            }
            if (space == std::string_view::npos) {
                break;
            }
        }
        text.append(line.substr(0, space));
        text += '\n';
        line.remove_prefix(space + 1);
        if (!line.empty() && (line.front() == '.' || line.front() == '\'')) {
            text += "\\&";
        }
    }
    text.append(line);
    return text;
}

// Every text line of the page within k_widest_line, but in unfilled text (.nf to .fi), whose
// line breaks are the text's, and the tag after .TP, which is one line.
std::string wrap_text_lines(std::string_view page)
{
    std::string lines;
    bool filled = true;
    bool tag = false;
    for (const auto line : split(page, '\n')) {
        if (line.starts_with(".nf")) {
            filled = false;
        } else if (line.starts_with(".fi")) {
            filled = true;
        }
        const bool request = line.starts_with('.') || line.starts_with('\'');
        lines += filled && !request && !tag ? wrapped(line) : std::string(line);
        lines += '\n';
        tag = line == ".TP";
    }
    lines.pop_back(); // after the page's last newline, split finds an empty line
    return lines;
}

bool in_queue_group(const CLI::Option& option)
{
    return option.get_group() == k_queue_group;
}

std::string option_heading(const CLI::Option& option)
{
    std::string heading;
    if (!option.nonpositional()) {
        heading = fmt::format("\\fI{}\\fR", roff(option.get_name()));
    } else {
        for (const auto& name : option.get_snames()) {
            heading += fmt::format("{}\\fB\\-{}\\fR", heading.empty() ? "" : ", ", roff(name));
        }
        for (const auto& name : option.get_lnames()) {
            heading += fmt::format("{}\\fB\\-\\-{}\\fR", heading.empty() ? "" : ", ", roff(name));
        }
    }
    const auto type = option.get_type_name();
    if (option.nonpositional() && !type.empty() && option.get_expected_max() > 0) {
        heading += fmt::format(" \\fI{}\\fR", roff(type));
    }
    if (option.get_expected_max() > 1) {
        heading += " ...";
    }
    return heading;
}

// The options of `command` that `wanted` picks, as a tagged list.
template <class Filter>
std::string option_list(const CLI::App& command, Filter wanted)
{
    std::string text;
    for (const auto* option : command.get_options()) {
        if (!wanted(*option)) {
            continue;
        }
        std::string body = roff(option->get_description());
        if (!body.empty() && body.back() != '.') {
            body += '.';
        }
        if (const auto& fallback = option->get_default_str(); !fallback.empty()) {
            body += fmt::format(" Default: {}.", roff(fallback));
        }
        if (const auto& variable = option->get_envname(); !variable.empty()) {
            body += fmt::format(" Environment: \\fB{}\\fR.", roff(variable));
        }
        text += fmt::format(".TP\n{}\n{}\n", option_heading(*option), body);
    }
    return text;
}

// A command's own options, then a pointer to the queue options, which are listed once.
std::string own_options(const CLI::App& command)
{
    auto text =
        option_list(command, [](const CLI::Option& option) { return !in_queue_group(option); });
    const auto& options = command.get_options();
    if (std::any_of(options.begin(), options.end(),
                    [](const CLI::Option* option) { return in_queue_group(*option); })) {
        text += ".PP\nAnd the queue options (\\fB\\-\\-redis\\fR, \\fB\\-\\-db\\fR, "
                "\\fB\\-\\-queue\\fR, ...), under \\fBQueue options\\fR.\n";
    }
    return text;
}

void collect_environment(const CLI::App& command, std::map<std::string, std::string>& variables)
{
    for (const auto* option : command.get_options()) {
        if (const auto& variable = option->get_envname(); !variable.empty()) {
            const auto name = option->get_lnames().empty() ? option->get_name()
                                                           : "--" + option->get_lnames().front();
            variables.emplace(variable, name);
        }
    }
    for (const auto* sub : command.get_subcommands([](const CLI::App*) { return true; })) {
        collect_environment(*sub, variables);
    }
}

} // namespace

std::string render_manual(const CLI::App& app, std::string_view template_text,
                          std::string_view date)
{
    std::string page;
    for (const auto line : split(template_text, '\n')) {
        if (line.starts_with(k_options_marker) && line.ends_with("@")) {
            const auto name = std::string(
                line.substr(k_options_marker.size(), line.size() - k_options_marker.size() - 1));
            const CLI::App* command = name == "gpusched" ? &app : app.get_subcommand(name);
            page += own_options(*command);
        } else if (line == k_queue_options_marker) {
            page += option_list(*app.get_subcommand(std::string(k_queue_options_command)),
                                in_queue_group);
        } else if (line == k_environment_marker) {
            std::map<std::string, std::string> variables;
            collect_environment(app, variables);
            for (const auto& [variable, option] : variables) {
                page += fmt::format(".TP\n.B {}\n{}\n", variable, roff(option));
            }
        } else {
            std::string text(line);
            for (const auto& [placeholder, value] :
                 {std::pair<std::string_view, std::string_view>{"@VERSION@", k_version},
                  {"@DATE@", date}}) {
                if (const auto at = text.find(placeholder); at != std::string::npos) {
                    text.replace(at, placeholder.size(), value);
                }
            }
            page += text + "\n";
        }
    }
    while (page.ends_with("\n\n")) {
        page.pop_back();
    }
    return wrap_text_lines(page);
}

} // namespace gpusched::cli
