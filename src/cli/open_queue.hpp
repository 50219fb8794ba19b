#pragma once

#include "queue_options.hpp"

#include <gpusched/queue/queue_backend.hpp>
#include <gpusched/queue/submission.hpp>

#include <chrono>
#include <memory>

namespace gpusched::cli {

// The queue the options name, local (an SQLite database) or on a Redis server: the queue
// commands use it through QueueBackend alone. Errors (no server, a bad database) are thrown,
// naming what could not be opened. `missing` says what a missing local database does (a Redis
// queue is never missing).
std::unique_ptr<queue::QueueBackend>
open_queue(const QueueOptions& options, queue::WhenMissing missing = queue::WhenMissing::make);

// The queue the options name, to read only, for the shells' completion: nothing where a
// local queue has no database (none is made, nor its directory); a database opened to read
// only (see SqliteQueueBackend); a Redis server given up on when it does not answer within
// `timeout`. Errors are thrown, as open_queue's are.
std::unique_ptr<queue::QueueBackend> open_queue_to_read(const QueueOptions& options,
                                                        std::chrono::milliseconds timeout);

// A submission to the queue the options name (settings.queue is set from them), by the store
// that keeps it: the one place `submit` learns which that is.
std::unique_ptr<queue::Submission> open_submission(const QueueOptions& options,
                                                   queue::SubmissionSettings settings);

} // namespace gpusched::cli
