#pragma once

#include "queue_options.hpp"

#include <gpusched/queue/queue_backend.hpp>
#include <gpusched/queue/submission.hpp>

#include <memory>

namespace gpusched::cli {

// The queue the options name, local (an SQLite database) or on a Redis server: the queue
// commands use it through QueueBackend alone. Errors (no server, a bad database) are thrown,
// naming what could not be opened. `missing` says what a missing local database does (a Redis
// queue is never missing).
std::unique_ptr<queue::QueueBackend>
open_queue(const QueueOptions& options, queue::WhenMissing missing = queue::WhenMissing::make);

// A submission to the queue the options name (settings.queue is set from them), by the store
// that keeps it: the one place `submit` learns which that is.
std::unique_ptr<queue::Submission> open_submission(const QueueOptions& options,
                                                   queue::SubmissionSettings settings);

} // namespace gpusched::cli
