#pragma once

#include <cstddef>

namespace gpusched {

// GNU parallel's conventions, which scripts already test for.
inline constexpr int k_exit_success = 0;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_too_many_failures = 101;
// sysexits.h's EX_TEMPFAIL: `gpusched exec` found no free GPU (--no-wait) or waited past
// --timeout; trying again later may work.
inline constexpr int k_exit_temporary_failure = 75;
// env(1)'s and the shell's: a command that could not be run, or was not found.
inline constexpr int k_exit_cannot_execute = 126;
inline constexpr int k_exit_command_not_found = 127;
inline constexpr int k_exit_fatal = 255;

// 0 when nothing failed, else the number of failed jobs, 101 when more than 100 failed.
int exit_status_for_failures(std::size_t failed);

// The shell's convention for a process stopped by signal `signal`.
int exit_status_for_signal(int signal);

} // namespace gpusched
