#pragma once

#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include <filesystem>

namespace gpusched::cli {

// The first `gpusched submit` to a local queue no worker serves starts one in the background,
// as task-spooler starts its server: `gpusched worker --db DATABASE --queue NAME`, in a
// session of its own (a closed terminal does not stop it), on the GPUs a run would use (it
// inherits CUDA_VISIBLE_DEVICES), its log appended to worker-NAME.log in the user's state
// directory ($XDG_STATE_HOME/gpusched, else beside the database).
// Two submitters racing start one worker: the one that starts it holds a name on the
// database's worker space meanwhile. Waits up to a few seconds for the worker to be listed;
// says so, naming its log, when it ended instead (no GPU found, say). Never throws: the jobs
// are queued whatever happens here.
// True when a worker serves the queue (those of workers that are gone are returned first).
bool served_by_a_worker(const std::filesystem::path& database, queue::SqliteQueue& queue);

void start_worker_if_none(const std::filesystem::path& database, queue::SqliteQueue& queue);

} // namespace gpusched::cli
