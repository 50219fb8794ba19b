#pragma once

#include <gpusched/scheduler.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace gpusched {

// "exit 0", "exit 3", "killed by SIGTERM".
std::string describe_outcome(const JobOutcome& outcome);

// A command as shown in the log: long ones are cut, with a note of the size left out.
std::string shorten_command(std::string_view command);

// "1.520 s", "2 min 03 s".
std::string format_duration(std::chrono::steady_clock::duration duration);

} // namespace gpusched
