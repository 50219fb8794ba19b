#pragma once

#include <gpusched/json_output.hpp>
#include <gpusched/queue/job_record.hpp>

#include <cstddef>
#include <string>

namespace gpusched::queue {

// A queued job and a worker as every `--json` names them (docs/json.md): the same fields,
// always present (null where unknown), from either store.
Json job_json(const JobRecord& job);
Json worker_json(const WorkerRecord& worker, std::size_t running);

// A listing as `gpusched queue --json` prints it (docs/json.md), into `document`: its counts,
// workers, pauses, the queued jobs shown with their positions (from `queued_from` + 1 on),
// the waiting, running and latest ended jobs. `queue` is the queue's name, `where` its
// description.
void add_listing_json(const QueueListing& listing, const std::string& queue,
                      const std::string& where, std::size_t queued_from, Json& document);

// How many of `listing`'s running jobs worker `id` runs.
std::size_t jobs_running_on(const QueueListing& listing, const std::string& id);

} // namespace gpusched::queue
