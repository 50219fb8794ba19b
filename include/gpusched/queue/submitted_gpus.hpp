#pragma once

#include <gpusched/job_request.hpp>
#include <gpusched/queue/job_record.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::queue {

// A queued job runs on the GPUs of the worker that takes it, whatever its submitter's
// environment says. A submitter who names GPUs (GPUSCHED_GPUS, else CUDA_VISIBLE_DEVICES) no
// worker of the queue runs on is told so.

// The GPUs `environment` names, as a worker lists its own (ids joined by commas), if any.
std::optional<std::string> gpus_named_by(const std::vector<std::string>& environment);

// What to tell a submitter who names `named` when `workers` serve queue `queue`: nothing when
// there is no worker, one has not said its GPUs yet, or one runs on those GPUs.
std::optional<std::string> other_gpus_warning(const std::string& named, const std::string& queue,
                                              const std::vector<WorkerRecord>& workers);

// What to tell a submitter whose jobs ask for `request` when `workers` serve queue `queue`:
// nothing when there is no worker, one has not said its GPUs yet, or one could run them.
std::optional<std::string> too_few_gpus_warning(const JobRequest& request, const std::string& queue,
                                                const std::vector<WorkerRecord>& workers);

} // namespace gpusched::queue
