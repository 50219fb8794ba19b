#pragma once

#include <gpusched/result.hpp>

#include <optional>
#include <string>

namespace gpusched::sys {

// A job asks for a niceness (JobRequest::nice, --nice) as nice(1) takes it: added to the
// runner's own. nice(1) starts the job's shell (see JobSpawner), found on gpusched's PATH
// once, as an absolute path: a job's directory or environment never decides which program
// that is.
const std::optional<std::string>& nice_program();

// Whether jobs can be started at `increment` more than our niceness: nice(1) is found, and
// a lowered niceness (below 0) is ours to give (root, CAP_SYS_NICE, or an RLIMIT_NICE that
// allows it); nice(1) would otherwise start the job at ours, after a warning in its stderr.
// The failure says which and how to mend it.
Result<void> check_niceness(int increment);

} // namespace gpusched::sys
