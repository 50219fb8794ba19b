#pragma once

#include <gpusched/queue/submission.hpp>

namespace gpusched::cli {

// Starts a worker for a queue that none serves, as task-spooler starts its server: `gpusched
// worker ARGUMENTS`, in a session of its own (a closed terminal does not stop it), on the GPUs
// a run would use (it inherits CUDA_VISIBLE_DEVICES), its log appended to worker-NAME.log in
// the user's state directory ($XDG_STATE_HOME/gpusched, else beside the queue). Waits up to a
// few seconds for the worker to serve the queue; says so, naming its log, when it ended
// instead (no GPU found, say). Throws only when it cannot be started at all.
void start_worker(const queue::WorkerToStart& worker);

} // namespace gpusched::cli
