// The bash script: a completion function for gpusched and simple_gpu_scheduler, one for
// simple_hypersearch.
#include "completion_model.hpp"

#include "complete_jobs_command.hpp"

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
    std::vector<std::string> job_patterns;
    std::vector<std::string> job_commands;
    std::vector<std::string> value_patterns; // of the options of job_commands that take one
    std::vector<std::string> seen;
    const auto add_once = [](std::vector<std::string>& patterns, const std::string& pattern) {
        if (std::find(patterns.begin(), patterns.end(), pattern) == patterns.end()) {
            patterns.push_back(pattern);
        }
    };
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
            } else if (option.value == ValueKind::gpu_ids) {
                add_once(gpu_patterns, pattern);
            } else if (option.value == ValueKind::jobs) {
                add_once(job_patterns, pattern);
            } else if (option.value == ValueKind::any && command.takes_jobs) {
                add_once(value_patterns, pattern);
            }
        }
        if (command.takes_jobs) {
            job_commands.push_back(command.name);
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

# Completes job $2 of command $1 (an id, a label, or the last of a list of them) with
# the jobs `PROGRAM {}` offers, newest first, and never with a file. The
# words before it are passed on as the program will get them (bash splits `--db=FILE` at
# the `=`): they name the queue.
_gpusched_jobs() {{
    local command=$1 cur=$2 word candidate description i
    local -a words=()
    for (( i = 2; i < COMP_CWORD; i++ )); do
        word=${{COMP_WORDS[i]}}
        if (( ${{#words[@]}} > 0 )) && [[ $word == = || ${{words[-1]}} == *= ]]; then
            words[-1]+=$word
        else
            words+=("$word")
        fi
    done
    COMPREPLY=()
    while IFS=$'\t' read -r candidate description; do
        COMPREPLY+=("$candidate")
    done < <("${{COMP_WORDS[0]}}" {} "$command" "$cur" "${{words[@]}}" 2>/dev/null)
    # Never a file; and in the order offered (bash 4.4 and later).
    compopt +o default 2>/dev/null
    compopt -o nosort 2>/dev/null
    return 0
}}

# Completes the value $3 of option $2 of program $1, in command $4; fails for an option with
# no known values: with 2 for one whose value is a file or whatever is typed, where a
# command's jobs are not.
_gpusched_values() {{
    local program=$1 option=$2 cur=$3 values prefix=""
    case $option in
{}        {})
            _gpusched_jobs "$4" "$cur"
            return 0 ;;
        {}) return 2 ;;
        {})
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

# Completes the value of the option before the cursor, or an option of "$1" (of command
# "$2"); fails when the word is neither (a file, a job, the command's name).
_gpusched_option_or_value() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=""
    (( COMP_CWORD > 0 )) && prev=${{COMP_WORDS[COMP_CWORD-1]}}
    # bash splits `--halt=now` at the `=`.
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then
        prev=${{COMP_WORDS[COMP_CWORD-2]}}
    fi
    _gpusched_values "${{COMP_WORDS[0]}}" "$prev" "$cur" "$2"
    case $? in
        0) return 0 ;;
        2) [[ $cur == -* ]] || return 0 ;; # nothing offered: a file, as bash completes it
    esac
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
    if _gpusched_option_or_value "$options" "$command"; then
        return
    fi
    case $command in
        {})
            _gpusched_jobs "$command" "${{COMP_WORDS[COMP_CWORD]}}"
            return ;;
    esac
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
        k_complete_jobs_command, k_complete_jobs_command, value_cases, fmt::join(job_patterns, "|"),
        fmt::join(value_patterns, "|"), fmt::join(gpu_patterns, "|"), names.substr(1), cases,
        fmt::join(job_commands, "|"), hypersearch_words.substr(1));
}

} // namespace gpusched::cli::completion
