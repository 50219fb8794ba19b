#include "manual.hpp"

#include "command_list.hpp"
#include "help_format.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/split.hpp>
#include <gpusched/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>
#include <vector>

namespace gpusched::cli {
namespace {

// A marker is a comment line, `.\" @WHAT@` or `.\" @WHAT COMMAND@`.
constexpr std::string_view k_marker = ".\\\" @";
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

// One option as an entry of a tagged list.
std::string option_entry(const CLI::Option& option)
{
    std::string body = roff(option.get_description());
    if (!body.empty() && body.back() != '.') {
        body += '.';
    }
    if (const auto& fallback = option.get_default_str(); !fallback.empty()) {
        body += fmt::format(" Default: {}.", roff(fallback));
    }
    if (const auto& variable = option.get_envname(); !variable.empty()) {
        body += fmt::format(" Environment: \\fB{}\\fR.", roff(variable));
    }
    return fmt::format(".TP\n{}\n{}\n", option_heading(option), body);
}

// Every option of `command`, as its --help has them: what it acts on (its positionals) first,
// then its options by group. A subcommand's own options (the group of its --help) come under
// no heading, then each other group (a run's GPUs, Jobs, ..., Queue) under its own; the main
// command's groups all have one. --help, which every command has, comes last of its group.
std::string option_list(const CLI::App& command)
{
    std::string text;
    for (const auto* option :
         command.get_options([](const CLI::Option* option) { return !option->nonpositional(); })) {
        text += option_entry(*option);
    }
    const bool subcommand = command.get_parent() != nullptr;
    auto groups = option_groups(command);
    const auto* help = command.get_help_ptr();
    const auto own = std::find_if(groups.begin(), groups.end(), [&](const std::string& group) {
        return subcommand && help != nullptr && group == help->get_group();
    });
    const bool own_first = own != groups.end();
    if (own_first) {
        std::rotate(groups.begin(), own, own + 1);
    }
    for (const auto& group : groups) {
        auto options = command.get_options([&](const CLI::Option* option) {
            return option->get_group() == group && option->nonpositional();
        });
        if (group.empty() || options.empty()) {
            continue;
        }
        if (!own_first || group != groups.front()) {
            text += fmt::format(".SS {}\n", roff(group));
        }
        std::stable_partition(options.begin(), options.end(),
                              [&](const CLI::Option* option) { return option != help; });
        for (const auto* option : options) {
            text += option_entry(*option);
        }
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

const CLI::App& command_named(const CLI::App& app, const std::string& name)
{
    if (name == "gpusched") {
        return app;
    }
    const auto subcommands = app.get_subcommands(
        [&](const CLI::App* sub) { return sub->get_name() == name && !sub->get_group().empty(); });
    if (subcommands.empty()) {
        throw UsageError(fmt::format("the manual names no command {}", name));
    }
    return *subcommands.front();
}

// The subcommands a user can type, each with its line of command_list.hpp: a subcommand
// without one would have no NAME line, so the manual is not made.
std::vector<const CommandSummary*> listed_commands(const CLI::App& app)
{
    for (const auto* sub :
         app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); })) {
        if (command_summary(sub->get_name()) == nullptr) {
            throw UsageError(
                fmt::format("subcommand {} has no summary in command_list.hpp", sub->get_name()));
        }
    }
    std::vector<const CommandSummary*> listed;
    for (const auto& command : k_command_list) {
        if (!app.get_subcommands(
                    [&](const CLI::App* sub) { return sub->get_name() == command.name; })
                 .empty()) {
            listed.push_back(&command);
        }
    }
    return listed;
}

std::string page_of(std::string_view command)
{
    return fmt::format("gpusched\\-{}", roff(command));
}

// What marker `what` (of command `name`, or "" for none) stands for.
std::string expand(const CLI::App& app, std::string_view what, const std::string& name)
{
    if (what == "OPTIONS") {
        return option_list(command_named(app, name));
    }
    if (what == "ENVIRONMENT") {
        std::map<std::string, std::string> variables;
        collect_environment(name.empty() ? app : command_named(app, name), variables);
        std::string text;
        for (const auto& [variable, option] : variables) {
            text += fmt::format(".TP\n.B {}\n{}\n", variable, roff(option));
        }
        return text;
    }
    if (what == "NAME") {
        const auto* command = command_summary(name);
        if (command == nullptr) {
            throw UsageError(fmt::format("command {} has no summary in command_list.hpp", name));
        }
        std::string summary(command->summary);
        summary.front() =
            static_cast<char>(std::tolower(static_cast<unsigned char>(summary.front())));
        return fmt::format("{} \\- {}\n", page_of(command->name), roff(summary));
    }
    if (what == "COMMANDS") {
        std::string text;
        std::string_view group;
        for (const auto* command : listed_commands(app)) {
            if (command->group != group) {
                group = command->group;
                text += fmt::format(".SS {}\n", roff(group));
            }
            text += fmt::format(".TP\n.BR {} (1)\n{}.\n", page_of(command->name),
                                roff(command->summary));
        }
        return text;
    }
    if (what == "PAGES") {
        std::string text;
        for (const auto* command : listed_commands(app)) {
            text += fmt::format(".BR {} (1),\n", page_of(command->name));
        }
        return text;
    }
    throw UsageError(fmt::format("unknown manual marker @{}@", what));
}

} // namespace

std::string render_manual(const CLI::App& app, std::string_view template_text,
                          std::string_view date)
{
    std::string page;
    for (const auto line : split(template_text, '\n')) {
        if (line.starts_with(k_marker) && line.ends_with("@") && line.size() > k_marker.size()) {
            const auto marker = line.substr(k_marker.size(), line.size() - k_marker.size() - 1);
            const auto space = marker.find(' ');
            page += expand(app, marker.substr(0, space),
                           space == std::string_view::npos ? ""
                                                           : std::string(marker.substr(space + 1)));
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
