#pragma once

#include <gpusched/result.hpp>
#include <gpusched/sys/unique_fd.hpp>

namespace gpusched::sys {

// Why a copy of a descriptor that must lie at `lowest` or above could not be made, from errno:
// where the limit on open files (ulimit -n) is below `lowest`, that limit is named, with the
// number a run needs; else "fcntl F_DUPFD_CLOEXEC: " and the error.
Failure descriptor_copy_failure(int lowest);

// A close-on-exec copy of `fd` at `lowest` or above (the places below are a job's: its GPUs'
// leases, the run's marker, its token). Throws as descriptor_copy_failure says: naming the
// limit, or std::system_error for the error.
UniqueFd duplicate_above(int fd, int lowest);

} // namespace gpusched::sys
