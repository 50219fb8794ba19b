#pragma once

#include "submit_command.hpp"

namespace gpusched::cli {

// `gpusched submit` to a local queue: the input's commands go into the database as one batch,
// in chunks of one transaction each (a submitter killed midway leaves whole chunks queued,
// never half a command), and every worker of the database is woken. With --wait, follows the
// jobs to their ends and exits as a run would.
int submit_to_local_queue(const SubmitOptions& options);

} // namespace gpusched::cli
