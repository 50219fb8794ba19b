#include "completion.hpp"

#include <gpusched/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace gpusched::cli {
namespace {

// What an option's value completes to.
enum class ValueKind {
    none,    // a flag: it takes no value
    any,     // a file name, or whatever the user types
    words,   // one of a few words
    gpu_ids, // GPU ids, comma-separated, as `gpusched gpus` lists them
};

struct OptionEntry {
    std::vector<std::string> shorts;
    std::vector<std::string> longs;
    std::string description;
    ValueKind value = ValueKind::none;
    std::vector<std::string> words; // for ValueKind::words
};

struct CommandEntry {
    std::string name; // empty for the main command
    std::string description;
    std::vector<OptionEntry> options;
};

// The values offered for the options that take a few known ones. Each is tested to be
// accepted by the option it is offered for (tests/integration/completion_test.cpp), so the
// list cannot drift from what the parser takes. --halt's counts are starting points to edit.
const std::vector<std::pair<std::string, std::vector<std::string>>> k_option_words = {
    {"halt",
     {"never", "now,fail=1", "soon,fail=1", "now,fail=10%", "soon,fail=10%", "now,success=1",
      "soon,success=1", "now,done=1", "soon,done=1"}},
    {"sampling-mode", {"grid", "shuffled_grid", "random"}},
};
// Options that take GPU ids, in every command that has them.
constexpr std::string_view k_gpu_ids_option = "gpus";

// A description as the shells show it: its first sentence, on one line. Each script quotes
// it as its shell needs (quoted_for_sh, quoted_for_fish, zsh_explanation).
std::string plain(std::string_view text)
{
    std::string plain(text.substr(0, text.find(". ")));
    std::replace(plain.begin(), plain.end(), '\n', ' ');
    return plain;
}

// `text` with every character escaped by a backslash where `special` holds it.
std::string escaped(std::string_view text, std::string_view special)
{
    std::string escaped;
    for (const char c : text) {
        if (special.find(c) != std::string_view::npos) {
            escaped += '\\';
        }
        escaped += c;
    }
    return escaped;
}

// For the inside of a single-quoted word of sh, bash and zsh: a quote ends the word, an
// escaped quote is written, and a new word is opened.
std::string quoted_for_sh(std::string_view text)
{
    std::string quoted;
    for (const char c : text) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted;
}

// For the inside of a single-quoted string of fish, where \' and \\ are the escapes.
std::string quoted_for_fish(std::string_view text)
{
    return escaped(text, "\\'");
}

// For the [explanation] of an _arguments spec, and the description of a _describe entry,
// inside single quotes: _arguments ends the explanation at an unescaped bracket, and reads a
// backslash as an escape.
std::string zsh_explanation(std::string_view text)
{
    return quoted_for_sh(escaped(text, "\\[]"));
}

OptionEntry entry_of(const CLI::Option& option)
{
    OptionEntry entry{option.get_snames(),
                      option.get_lnames(),
                      plain(option.get_description()),
                      ValueKind::none,
                      {}};
    if (option.get_expected_max() <= 0) {
        return entry;
    }
    entry.value = ValueKind::any;
    for (const auto& name : entry.longs) {
        if (name == k_gpu_ids_option) {
            entry.value = ValueKind::gpu_ids;
        }
        for (const auto& [option_name, words] : k_option_words) {
            if (name == option_name) {
                entry.value = ValueKind::words;
                entry.words = words;
            }
        }
    }
    return entry;
}

std::vector<CommandEntry> commands_of(const CLI::App& app)
{
    std::vector<CommandEntry> commands;
    const auto add = [&](const CLI::App& command, std::string name) {
        CommandEntry entry{std::move(name), plain(command.get_description()), {}};
        for (const auto* option : command.get_options()) {
            if (option->nonpositional()) {
                entry.options.push_back(entry_of(*option));
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

const CommandEntry& command_named(const std::vector<CommandEntry>& commands, std::string_view name)
{
    for (const auto& command : commands) {
        if (command.name == name) {
            return command;
        }
    }
    throw std::logic_error(fmt::format("no command {} to complete", name));
}

std::string joined(const std::vector<std::string>& words)
{
    return fmt::format("{}", fmt::join(words, " "));
}

// "-g|--gpus", "--halt": an option's names as a shell case pattern, or as words.
std::string names_of(const OptionEntry& option, std::string_view separator)
{
    std::string names;
    for (const auto& name : option.shorts) {
        names += fmt::format("{}-{}", names.empty() ? "" : separator, name);
    }
    for (const auto& name : option.longs) {
        names += fmt::format("{}--{}", names.empty() ? "" : separator, name);
    }
    return names;
}

std::string bash(const std::vector<CommandEntry>& commands)
{
    std::string names;
    std::string cases;
    std::string value_cases;
    std::vector<std::string> gpu_patterns;
    std::vector<std::string> seen;
    for (const auto& command : commands) {
        std::string words;
        for (const auto& option : command.options) {
            words += " " + names_of(option, " ");
            const auto pattern = names_of(option, "|");
            if (option.value == ValueKind::words &&
                std::find(seen.begin(), seen.end(), pattern) == seen.end()) {
                seen.push_back(pattern);
                value_cases +=
                    fmt::format("        {}) values=\"{}\" ;;\n", pattern, joined(option.words));
            } else if (option.value == ValueKind::gpu_ids &&
                       std::find(gpu_patterns.begin(), gpu_patterns.end(), pattern) ==
                           gpu_patterns.end()) {
                gpu_patterns.push_back(pattern);
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
    std::string hypersearch_words;
    for (const auto& option : command_named(commands, "hypersearch").options) {
        hypersearch_words += " " + names_of(option, " ");
    }
    return fmt::format(
        R"script(# bash completion for gpusched and its other names, simple_gpu_scheduler and
# simple_hypersearch; generated from its command line.

# The GPU ids `PROGRAM gpus` lists, one a line.
_gpusched_gpu_ids() {{
    local id rest
    "$1" gpus --probe-timeout 3 2>/dev/null | while read -r id rest; do
        [[ $id == ID ]] || printf '%s\n' "$id"
    done
}}

# Completes the value $3 of option $2 of program $1; fails for an option with no known values.
_gpusched_values() {{
    local program=$1 option=$2 cur=$3 values prefix=""
    case $option in
{}        {})
            # A list: the id after the last comma is completed, from those not in it yet.
            [[ $cur == *,* ]] && prefix=${{cur%,*}},
            cur=${{cur##*,}}
            local id
            values=""
            for id in $(_gpusched_gpu_ids "$program"); do
                [[ ,$prefix == *,"$id",* ]] || values+=" $id"
            done ;;
        *) return 1 ;;
    esac
    COMPREPLY=($(compgen -P "$prefix" -W "$values" -- "$cur"))
}}

# Completes the value of the option before the cursor, or an option of "$1"; fails when
# the word is neither (a file, the command's name).
_gpusched_option_or_value() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=""
    (( COMP_CWORD > 0 )) && prev=${{COMP_WORDS[COMP_CWORD-1]}}
    # bash splits `--halt=now` at the `=`.
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then
        prev=${{COMP_WORDS[COMP_CWORD-2]}}
    fi
    if _gpusched_values "${{COMP_WORDS[0]}}" "$prev" "$cur"; then
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$1" -- "$cur"))
        return 0
    fi
    return 1
}}

_gpusched() {{
    local commands="{}"
    local command="" options
    if (( COMP_CWORD > 1 )) && [[ " $commands " == *" ${{COMP_WORDS[1]}} "* ]]; then
        command=${{COMP_WORDS[1]}}
    fi
    case $command in
{}    esac
    if _gpusched_option_or_value "$options"; then
        return
    fi
    if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "$commands" -- "${{COMP_WORDS[1]}}"))
    fi
}}

_simple_hypersearch() {{
    _gpusched_option_or_value "{}"
}}

complete -o default -F _gpusched gpusched simple_gpu_scheduler
complete -o default -F _simple_hypersearch simple_hypersearch
)script",
        value_cases, fmt::join(gpu_patterns, "|"), names.substr(1), cases,
        hypersearch_words.substr(1));
}

// _arguments specs for each name of each option of `command`, with its value's completion.
std::string zsh_specs(const CommandEntry& command, std::string_view indent)
{
    std::string specs;
    for (const auto& option : command.options) {
        std::string value;
        switch (option.value) {
        case ValueKind::none:
            break;
        case ValueKind::any:
            value = ":value:_default";
            break;
        case ValueKind::words:
            value = fmt::format(":value:({})", joined(option.words));
            break;
        case ValueKind::gpu_ids:
            value = ":GPU ids:_gpusched_gpu_ids";
            break;
        }
        const auto explanation = zsh_explanation(option.description);
        for (const auto& name : option.shorts) {
            specs += fmt::format(" \\\n{}'-{}[{}]{}'", indent, name, explanation, value);
        }
        for (const auto& name : option.longs) {
            specs += fmt::format(" \\\n{}'--{}[{}]{}'", indent, name, explanation, value);
        }
    }
    return specs;
}

std::string zsh(const std::vector<CommandEntry>& commands)
{
    std::string described;
    std::string cases;
    for (const auto& command : commands) {
        const auto specs = zsh_specs(command, "        ");
        if (command.name.empty()) {
            cases +=
                fmt::format("    *)\n      _arguments{} \\\n        '*:file:_files' ;;\n", specs);
        } else {
            described += fmt::format("    '{}:{}'\n", command.name,
                                     quoted_for_sh(escaped(command.description, "\\")));
            cases = fmt::format("    {})\n      _arguments{} \\\n        '*:file:_files' ;;\n",
                                command.name, specs) +
                    cases;
        }
    }
    return fmt::format(R"script(#compdef gpusched simple_gpu_scheduler simple_hypersearch
# zsh completion for gpusched, and for simple_gpu_scheduler and simple_hypersearch, its other
# names; generated from its command line.

# The GPU ids `gpusched gpus` lists, comma-separated.
_gpusched_gpu_ids() {{
  local -a ids
  ids=(${{${{(f)"$($words[1] gpus --probe-timeout 3 2>/dev/null)"}}[2,-1]%% *}})
  _values -s , 'GPU id' $ids
}}

_gpusched() {{
  if [[ $service == simple_hypersearch ]]; then
    _arguments{} \
      '*:file:_files'
    return
  fi
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
)script",
                       zsh_specs(command_named(commands, "hypersearch"), "      "), described,
                       cases);
}

std::string fish_flags(const OptionEntry& option)
{
    std::string flags;
    for (const auto& name : option.shorts) {
        flags += " -s " + name;
    }
    for (const auto& name : option.longs) {
        flags += " -l " + name;
    }
    switch (option.value) {
    case ValueKind::none:
        break;
    case ValueKind::any:
        flags += " -r";
        break;
    case ValueKind::words:
        flags += fmt::format(" -x -a '{}'", joined(option.words));
        break;
    case ValueKind::gpu_ids:
        flags += " -x -a '(__fish_complete_list , __gpusched_gpu_ids)'";
        break;
    }
    return flags;
}

// fish loads the completions of a command from a file of its name: one script per name.
std::string fish(const std::vector<CommandEntry>& commands, std::string_view program)
{
    std::string lines = fmt::format(
        "# fish completion for {}, generated from the command line of gpusched.\n", program);
    if (program == "simple_hypersearch") {
        for (const auto& option : command_named(commands, "hypersearch").options) {
            lines += fmt::format("complete -c {}{} -d '{}'\n", program, fish_flags(option),
                                 quoted_for_fish(option.description));
        }
        return lines;
    }
    lines += fmt::format(
        R"script(# The GPU ids `{} gpus` lists, one a line, but those the list being typed has.
function __gpusched_gpu_ids
    set -l program (commandline -opc)[1]
    set -l listed (string split , -- (commandline -ct))
    for id in ($program gpus --probe-timeout 3 2>/dev/null | string match -rv '^ID ' | string replace -r ' .*' '')
        contains -- $id $listed; or echo $id
    end
end
)script",
        program);
    std::string names;
    for (const auto& command : commands) {
        names += command.name.empty() ? "" : " " + command.name;
    }
    for (const auto& command : commands) {
        const auto condition = command.name.empty()
                                   ? fmt::format("not __fish_seen_subcommand_from{}", names)
                                   : fmt::format("__fish_seen_subcommand_from {}", command.name);
        if (!command.name.empty()) {
            lines += fmt::format("complete -c {} -n '__fish_use_subcommand' -a {} -d '{}'\n",
                                 program, command.name, quoted_for_fish(command.description));
        }
        for (const auto& option : command.options) {
            lines += fmt::format("complete -c {} -n '{}'{} -d '{}'\n", program, condition,
                                 fish_flags(option), quoted_for_fish(option.description));
        }
    }
    return lines;
}

} // namespace

std::string render_completion(const CLI::App& app, std::string_view shell, std::string_view program)
{
    if (program != "gpusched" && program != "simple_gpu_scheduler" &&
        program != "simple_hypersearch") {
        throw UsageError(fmt::format(
            "no completion for '{}': gpusched, simple_gpu_scheduler or simple_hypersearch",
            program));
    }
    const auto commands = commands_of(app);
    if (shell == "bash") {
        return bash(commands);
    }
    if (shell == "zsh") {
        return zsh(commands);
    }
    if (shell == "fish") {
        return fish(commands, program);
    }
    throw UsageError(fmt::format("no completion for shell '{}': bash, zsh or fish", shell));
}

} // namespace gpusched::cli
