#include "open_queue.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/queue/local_queue_backend.hpp>

namespace gpusched::cli {

std::unique_ptr<queue::QueueBackend> open_queue(const QueueOptions& options)
{
    if (options.is_local()) {
        return std::make_unique<queue::LocalQueueBackend>(local_database_of(options),
                                                          options.queue);
    }
    throw UsageError("this command works on local queues only so far: leave out --redis");
}

} // namespace gpusched::cli
