#pragma once

#include <gpusched/json_output.hpp>
#include <gpusched/queue/job_record.hpp>

#include <cstddef>

namespace gpusched::cli {

// A queued job and a worker as every `--json` names them (docs/json.md): the same fields,
// always present (null where unknown), from either store.
Json job_json(const queue::JobRecord& job);
Json worker_json(const queue::WorkerRecord& worker, std::size_t running);

// How many of `listing`'s running jobs worker `id` runs.
std::size_t jobs_running_on(const queue::QueueListing& listing, const std::string& id);

} // namespace gpusched::cli
