#include "completion.hpp"

#include <gpusched/errors.hpp>

#include <fmt/format.h>

#include <vector>

namespace gpusched::cli {
namespace {

struct OptionEntry {
    std::vector<std::string> shorts;
    std::vector<std::string> longs;
    std::string description;
};

struct CommandEntry {
    std::string name; // empty for the main command
    std::string description;
    std::vector<OptionEntry> options;
};

// Descriptions go into shell strings: keep the first sentence, and nothing that quotes or
// brackets would misread.
std::string plain(std::string_view text)
{
    std::string plain;
    for (const char c : text.substr(0, text.find(". "))) {
        if (c == '\'' || c == '"' || c == '[' || c == ']' || c == ':' || c == '\\' || c == '$' ||
            c == '`') {
            continue;
        }
        plain += c == '\n' ? ' ' : c;
    }
    return plain;
}

std::vector<CommandEntry> commands_of(const CLI::App& app)
{
    std::vector<CommandEntry> commands;
    const auto add = [&](const CLI::App& command, std::string name) {
        CommandEntry entry{std::move(name), plain(command.get_description()), {}};
        for (const auto* option : command.get_options()) {
            if (option->nonpositional()) {
                entry.options.push_back(
                    {option->get_snames(), option->get_lnames(), plain(option->get_description())});
            }
        }
        commands.push_back(std::move(entry));
    };
    add(app, "");
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (!sub->get_group().empty()) { // internal subcommands have no group
            add(*sub, sub->get_name());
        }
    }
    return commands;
}

std::string bash(const std::vector<CommandEntry>& commands)
{
    std::string names;
    std::string cases;
    for (const auto& command : commands) {
        std::string words;
        for (const auto& option : command.options) {
            for (const auto& name : option.shorts) {
                words += " -" + name;
            }
            for (const auto& name : option.longs) {
                words += " --" + name;
            }
        }
        if (command.name.empty()) {
            cases += fmt::format("        *) options=\"{}\" ;;\n", words.substr(1));
        } else {
            names += " " + command.name;
            cases = fmt::format("        {}) options=\"{}\" ;;\n", command.name, words.substr(1)) +
                    cases;
        }
    }
    return fmt::format(R"(# bash completion for gpusched, generated from its command line.
_gpusched() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}}
    local commands="{}"
    local command="" options
    if (( COMP_CWORD > 1 )) && [[ " $commands " == *" ${{COMP_WORDS[1]}} "* ]]; then
        command=${{COMP_WORDS[1]}}
    fi
    case $command in
{}    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
}}
complete -o default -F _gpusched gpusched
)",
                       names.substr(1), cases);
}

std::string zsh(const std::vector<CommandEntry>& commands)
{
    std::string described;
    std::string cases;
    for (const auto& command : commands) {
        std::string specs;
        for (const auto& option : command.options) {
            for (const auto& name : option.shorts) {
                specs += fmt::format(" \\\n        '-{}[{}]'", name, option.description);
            }
            for (const auto& name : option.longs) {
                specs += fmt::format(" \\\n        '--{}[{}]'", name, option.description);
            }
        }
        if (command.name.empty()) {
            cases +=
                fmt::format("    *)\n      _arguments{} \\\n        '*:file:_files' ;;\n", specs);
        } else {
            described += fmt::format("    '{}:{}'\n", command.name, command.description);
            cases = fmt::format("    {})\n      _arguments{} \\\n        '*:file:_files' ;;\n",
                                command.name, specs) +
                    cases;
        }
    }
    return fmt::format(R"(#compdef gpusched
# zsh completion for gpusched, generated from its command line.
_gpusched() {{
  local -a commands
  commands=(
{}  )
  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then
    _describe 'command' commands
    _files
    return
  fi
  case $words[2] in
{}  esac
}}
_gpusched "$@"
)",
                       described, cases);
}

std::string fish(const std::vector<CommandEntry>& commands)
{
    std::string names;
    for (const auto& command : commands) {
        names += command.name.empty() ? "" : " " + command.name;
    }
    std::string lines = "# fish completion for gpusched, generated from its command line.\n";
    for (const auto& command : commands) {
        const auto condition = command.name.empty()
                                   ? fmt::format("not __fish_seen_subcommand_from{}", names)
                                   : fmt::format("__fish_seen_subcommand_from {}", command.name);
        if (!command.name.empty()) {
            lines += fmt::format("complete -c gpusched -n '__fish_use_subcommand' -a {} -d '{}'\n",
                                 command.name, command.description);
        }
        for (const auto& option : command.options) {
            std::string flags;
            for (const auto& name : option.shorts) {
                flags += " -s " + name;
            }
            for (const auto& name : option.longs) {
                flags += " -l " + name;
            }
            lines += fmt::format("complete -c gpusched -n '{}'{} -d '{}'\n", condition, flags,
                                 option.description);
        }
    }
    return lines;
}

} // namespace

std::string render_completion(const CLI::App& app, std::string_view shell)
{
    const auto commands = commands_of(app);
    if (shell == "bash") {
        return bash(commands);
    }
    if (shell == "zsh") {
        return zsh(commands);
    }
    if (shell == "fish") {
        return fish(commands);
    }
    throw UsageError(fmt::format("no completion for shell '{}': bash, zsh or fish", shell));
}

} // namespace gpusched::cli
