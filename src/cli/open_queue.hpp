#pragma once

#include "queue_options.hpp"

#include <gpusched/queue/queue_backend.hpp>

#include <memory>

namespace gpusched::cli {

// The queue the options name, local (an SQLite database) or on a Redis server: the queue
// commands use it through QueueBackend alone. Errors (no server, a bad database) are thrown,
// naming what could not be opened.
std::unique_ptr<queue::QueueBackend> open_queue(const QueueOptions& options);

} // namespace gpusched::cli
