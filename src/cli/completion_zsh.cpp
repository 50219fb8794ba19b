// The zsh script: one completion function for the three names, in _arguments' terms.
#include "completion_model.hpp"

#include "complete_jobs_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpusched::cli::completion {
namespace {

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
        case ValueKind::jobs:
            // A space first: called as written, without _arguments's compadd options.
            value = fmt::format(":jobs: _gpusched_jobs {}", command.name);
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

} // namespace

std::string zsh_script(const std::vector<CommandEntry>& commands)
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
            const auto arguments = command.takes_jobs
                                       ? fmt::format("'*:job: _gpusched_jobs {}'", command.name)
                                       : std::string("'*:file:_files'");
            cases = fmt::format("    {})\n      _arguments{} \\\n        {} ;;\n", command.name,
                                specs, arguments) +
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

# The jobs `gpusched {}` offers for the word being completed, newest first,
# each with what it is: of command $1, in the queue the words before it name.
_gpusched_jobs() {{
  local -a jobs
  local line
  for line in ${{(f)"$($words[1] {} $1 "$PREFIX" "${{(Q@)words[3,CURRENT-1]}}" 2>/dev/null)"}}; do
    jobs+=("${{${{line%%$'\t'*}}//:/\\:}}:${{line#*$'\t'}}")
  done
  _describe -V -t jobs job jobs
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
                       k_complete_jobs_command, k_complete_jobs_command,
                       zsh_specs(command_named(commands, "hypersearch"), "      "), described,
                       cases);
}

} // namespace gpusched::cli::completion
