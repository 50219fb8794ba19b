#pragma once

namespace gpusched::sys {

// Run first thing in main. Opens /dev/null on each of fds 0, 1 and 2 that is closed, so that
// no descriptor gpusched opens later lands there (its signalfd read as commands, a lock file
// that jobs write their output into). Ignores SIGPIPE, so that a write to a pipe nobody
// reads any more fails with EPIPE instead of killing gpusched and orphaning its jobs (jobs
// get SIGPIPE back: see JobSpawner).
void prepare_standard_streams();

// Whether stdin was closed when gpusched started (it is /dev/null now).
bool stdin_was_closed();

} // namespace gpusched::sys
