// The fish scripts: `complete` rules, one file per name.
#include "completion_model.hpp"

#include "complete_jobs_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpusched::cli::completion {
namespace {

// The flags of `option` of `command`: its names, and what its value completes to.
std::string fish_flags(const OptionEntry& option, std::string_view command)
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
    case ValueKind::jobs:
        flags += fmt::format(" -x -k -a '(__gpusched_jobs {})'", command);
        break;
    }
    return flags;
}

} // namespace

std::string fish_script(const std::vector<CommandEntry>& commands, std::string_view program)
{
    std::string lines = fmt::format(
        "# fish completion for {}, generated from the command line of gpusched.\n", program);
    if (program == "simple_hypersearch") {
        for (const auto& option : command_named(commands, "hypersearch").options) {
            lines +=
                fmt::format("complete -c {}{} -d '{}'\n", program,
                            fish_flags(option, "hypersearch"), quoted_for_fish(option.description));
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

# The jobs `{} {}` offers for the word being completed, newest first,
# each with what it is: of command $argv[1], in the queue the words before it name.
function __gpusched_jobs
    set -l words (commandline -opc)
    set -l typed (commandline -ct)
    set -l program $words[1]
    set -e words[1..2]
    $program {} $argv[1] "$typed" $words 2>/dev/null
end
)script",
        program, program, k_complete_jobs_command, k_complete_jobs_command);
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
        if (command.takes_jobs) {
            // Its arguments are jobs, in the order offered, and never files.
            lines += fmt::format("complete -c {} -n '{}' -f -k -a '(__gpusched_jobs {})'\n",
                                 program, condition, command.name);
        }
        for (const auto& option : command.options) {
            lines +=
                fmt::format("complete -c {} -n '{}'{} -d '{}'\n", program, condition,
                            fish_flags(option, command.name), quoted_for_fish(option.description));
        }
    }
    return lines;
}

} // namespace gpusched::cli::completion
