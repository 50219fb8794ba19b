#pragma once

#include <array>
#include <string_view>

namespace gpusched::cli {

// Each subcommand in a line, in groups, as git's command-list.txt has them: the "Commands:"
// block of --help, and the NAME line of each subcommand's manual page (gpusched-submit(1)),
// which also lists them in gpusched(1). Its own --help begins with a longer description.
struct CommandSummary {
    std::string_view group;
    std::string_view name;
    std::string_view summary; // at most 63 characters: one line of --help in 80 columns
};

inline constexpr std::string_view k_gpus_commands = "On this server's GPUs, shared with its users";
inline constexpr std::string_view k_queue_commands = "On a queue of jobs (local, or in Redis)";
inline constexpr std::string_view k_other_commands = "Other";

inline constexpr std::array k_command_list = {
    CommandSummary{k_gpus_commands, "exec", "Wait for free GPUs, then run a command on them"},
    CommandSummary{k_gpus_commands, "status", "Show who holds each GPU's lease, and who waits"},
    CommandSummary{k_gpus_commands, "gpus", "List the GPUs a run would use, with their processes"},
    CommandSummary{k_queue_commands, "submit", "Queue commands for workers to run"},
    CommandSummary{k_queue_commands, "worker", "Run a queue's jobs on this machine's GPUs"},
    CommandSummary{k_queue_commands, "queue", "Show a queue: its queued, running and ended jobs"},
    CommandSummary{k_queue_commands, "workers", "List the workers that serve a queue"},
    CommandSummary{k_queue_commands, "cancel", "Cancel queued or running jobs"},
    CommandSummary{k_queue_commands, "pause", "Start no new job from a queue, or none on one GPU"},
    CommandSummary{k_queue_commands, "resume", "Undo a pause"},
    CommandSummary{k_queue_commands, "retry", "Queue again jobs that did not succeed"},
    CommandSummary{k_queue_commands, "logs", "Show what a job wrote to its stdout and stderr"},
    CommandSummary{k_queue_commands, "wait", "Wait until jobs end, and exit as a run would"},
    CommandSummary{k_other_commands, "hypersearch",
                   "Print the commands of a grid or random search"},
    CommandSummary{k_other_commands, "report", "Summarise a job log: failures, GPU time, GPU use"},
    CommandSummary{k_other_commands, "serve", "Serve a live web page of this server, and its API"},
};

// The summary of subcommand `name`; nullptr for a name the list does not have.
constexpr const CommandSummary* command_summary(std::string_view name)
{
    for (const auto& command : k_command_list) {
        if (command.name == name) {
            return &command;
        }
    }
    return nullptr;
}

} // namespace gpusched::cli
