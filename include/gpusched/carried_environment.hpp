#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// What of a submitter's environment its queued jobs carry to the worker. Each entry of
// `named` (`submit --env`) is NAME (that variable), PREFIX* (those whose names start so) or
// NAME=VALUE (set to that value). With `whole`, the whole environment is carried, with the
// NAME=VALUE entries over it; without, only what `named` names.
//
// The local queue carries the whole environment: its database is readable by its owner
// alone. A Redis queue carries only what --env names unless --env-all: whoever can read that
// server can read what a job carries.
struct EnvironmentChoice {
    std::vector<std::string> named;
    bool whole = true;
};

std::vector<std::string> carried_environment(const std::vector<std::string>& environment,
                                             const EnvironmentChoice& choice);

// What is wrong with `entry` as an --env entry (a name of letters, digits and _, not starting
// with a digit, then `*` or `=VALUE` or nothing), or empty when nothing is.
std::string environment_entry_error(std::string_view entry);

} // namespace gpusched
