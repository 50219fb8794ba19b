#pragma once

#include <gpusched/resume_state.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/input_reader.hpp>

#include <optional>

namespace gpusched::sys {

// --dry-run: prints on stdout, in order, which job would start on which GPU, and runs
// nothing. Jobs are taken to last equally long, so GPUs are handed out as the scheduler
// would hand them out if every job took the same time.
int dry_run(Scheduler& scheduler, InputReader& input, std::optional<ResumeState>& resume);

} // namespace gpusched::sys
