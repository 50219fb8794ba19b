#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::cli {

// The internal command the completion scripts call for the jobs they offer.
inline constexpr std::string_view k_complete_jobs_command = "__complete-jobs";

// Where the shells complete a job (its id or its label) rather than a file: the ID arguments
// of these commands, and the values of these options (submit's).
inline constexpr std::array<std::string_view, 4> k_commands_of_jobs = {"cancel", "retry", "logs",
                                                                       "wait"};
inline constexpr std::array<std::string_view, 2> k_options_of_jobs = {"after", "after-ok"};

// `gpusched __complete-jobs COMMAND WORD [ARG...]`: what a shell offers for WORD, the job
// being typed in `gpusched COMMAND ARG... WORD`, one a line as CANDIDATE<TAB>DESCRIPTION: the
// newest jobs COMMAND acts on (cancel: queued, waiting or running, and the user's own), at
// most 100, then their labels. The queue is the one the ARGs name, found as COMMAND finds it
// (--db, --redis, --queue and their variables), and it is only read: no database or directory
// is made, no worker started, a Redis server given up on within a fraction of a second.
// Where there is no queue, or it cannot be read at once, nothing is offered; the exit status
// is 0 and nothing is written on stderr either way. Run before the main parser is built: it
// answers a keystroke.
int run_complete_jobs(const std::vector<std::string>& args);

} // namespace gpusched::cli
