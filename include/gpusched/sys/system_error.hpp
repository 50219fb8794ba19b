#pragma once

#include <gpusched/result.hpp>

#include <string>

namespace gpusched::sys {

// Throws std::system_error for the current errno; `what` names the call and its
// argument, e.g. "open commands.txt".
[[noreturn]] void throw_errno(const std::string& what);

// Throws for `error` (an errno value returned rather than set, as posix_spawn does).
[[noreturn]] void throw_error_code(int error, const std::string& what);

// The current errno as an expected failure, "WHAT: STRERROR", carrying the errno.
Failure system_failure(const std::string& what);

} // namespace gpusched::sys
