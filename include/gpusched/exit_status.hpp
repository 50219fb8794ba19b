#pragma once

#include <cstddef>

namespace gpusched {

// GNU parallel's conventions, which scripts already test for: 0, a count of failed jobs up to
// 100, 101 beyond, 128 + N for a signal, and 255 for everything that is gpusched's own error.
// No count of failed jobs can be 255 (exit_status_for_failures stops at 101), so a script can
// tell "2 jobs failed" from "the command line was wrong".
inline constexpr int k_exit_success = 0;
inline constexpr int k_exit_too_many_failures = 101;
// sysexits.h's EX_TEMPFAIL: `gpusched exec` found no free GPU (--no-wait) or waited past
// --timeout; trying again later may work.
inline constexpr int k_exit_temporary_failure = 75;
// timeout(1)'s: `gpusched wait --timeout` gave up before the jobs it waited for ended (they
// may still run).
inline constexpr int k_exit_timed_out = 124;
// env(1)'s and the shell's: a command that could not be run, or was not found.
inline constexpr int k_exit_cannot_execute = 126;
inline constexpr int k_exit_command_not_found = 127;
// A usage error (a bad option, number, GPU id or input file, no GPU) and a system error that
// made the run meaningless share GNU parallel's 255: both say "gpusched's fault, not the
// jobs'", and neither is a count.
inline constexpr int k_exit_usage = 255;
inline constexpr int k_exit_fatal = 255;

// 0 when nothing failed, else the number of failed jobs, 101 when more than 100 failed.
int exit_status_for_failures(std::size_t failed);

// The shell's convention for a process stopped by signal `signal`.
int exit_status_for_signal(int signal);

} // namespace gpusched
