#include "manual.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/split.hpp>
#include <gpusched/version.hpp>

#include <fmt/format.h>

#include <map>

namespace gpusched::cli {
namespace {

constexpr std::string_view k_options_marker = ".\\\" @OPTIONS ";
constexpr std::string_view k_environment_marker = ".\\\" @ENVIRONMENT@";

// Text for roff: backslashes escaped, hyphens as minus signs (so they copy and search as
// typed), and nothing at the start of a line that roff would take for a request.
std::string roff(std::string_view text)
{
    std::string escaped;
    for (const char c : text) {
        if (c == '\\') {
            escaped += "\\e";
        } else if (c == '-') {
            escaped += "\\-";
        } else if (c == '\n') {
            escaped += ' ';
        } else {
            escaped += c;
        }
    }
    if (!escaped.empty() && (escaped.front() == '.' || escaped.front() == '\'')) {
        escaped.insert(0, "\\&");
    }
    return escaped;
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

std::string option_list(const CLI::App& command)
{
    std::string text;
    for (const auto* option : command.get_options()) {
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

std::string render_manual(const CLI::App& app, std::string_view template_text)
{
    std::string page;
    for (const auto line : split(template_text, '\n')) {
        if (line.starts_with(k_options_marker) && line.ends_with("@")) {
            const auto name = std::string(
                line.substr(k_options_marker.size(), line.size() - k_options_marker.size() - 1));
            const CLI::App* command = name == "gpusched" ? &app : app.get_subcommand(name);
            page += option_list(*command);
        } else if (line == k_environment_marker) {
            std::map<std::string, std::string> variables;
            collect_environment(app, variables);
            for (const auto& [variable, option] : variables) {
                page += fmt::format(".TP\n.B {}\n{}\n", variable, roff(option));
            }
        } else {
            std::string text(line);
            if (const auto at = text.find("@VERSION@"); at != std::string::npos) {
                text.replace(at, 9, k_version);
            }
            page += text + "\n";
        }
    }
    while (page.ends_with("\n\n")) {
        page.pop_back();
    }
    return page;
}

} // namespace gpusched::cli
