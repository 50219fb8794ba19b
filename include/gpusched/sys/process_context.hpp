#pragma once

#include <gpusched/job_context.hpp>

namespace gpusched::sys {

// The context a job submitted from this process runs in: our working directory (as the shell
// names it in $PWD, when that is the same directory, so a path through a link stays one),
// our whole environment and our umask. Throws when the directory is gone.
JobContext this_process_context();

} // namespace gpusched::sys
