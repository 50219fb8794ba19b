// The bash script: a completion function for gpusched and simple_gpu_scheduler, one for
// simple_hypersearch.
#include "completion_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpusched::cli::completion {

std::string bash_script(const std::vector<CommandEntry>& commands)
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

} // namespace gpusched::cli::completion
