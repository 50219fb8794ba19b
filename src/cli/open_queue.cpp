#include "open_queue.hpp"

#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>
#include <gpusched/queue/redis/redis_queue_backend.hpp>

namespace gpusched::cli {

std::unique_ptr<queue::QueueBackend> open_queue(const QueueOptions& options)
{
    if (options.is_local()) {
        return std::make_unique<queue::SqliteQueueBackend>(local_database_of(options),
                                                          options.queue);
    }
    return std::make_unique<queue::RedisQueueBackend>(redis_url_of(options), options.queue);
}

} // namespace gpusched::cli
