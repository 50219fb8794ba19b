#include "open_queue.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/queue/redis/redis_queue_backend.hpp>
#include <gpusched/queue/redis/redis_submission.hpp>
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>
#include <gpusched/queue/sqlite/sqlite_submission.hpp>

namespace gpusched::cli {

std::unique_ptr<queue::QueueBackend> open_queue(const QueueOptions& options,
                                                queue::WhenMissing missing)
{
    if (options.is_local()) {
        return std::make_unique<queue::SqliteQueueBackend>(local_database_of(options),
                                                           options.queue, missing);
    }
    return std::make_unique<queue::RedisQueueBackend>(redis_url_of(options), options.queue,
                                                      read_key(options));
}

std::unique_ptr<queue::QueueBackend> open_queue_to_read(const QueueOptions& options,
                                                        std::chrono::milliseconds timeout)
{
    if (!options.is_local()) {
        return std::make_unique<queue::RedisQueueBackend>(redis_url_of(options), options.queue,
                                                          std::nullopt, timeout);
    }
    if (const auto name = queue::check_queue_name(options.queue); !name) {
        throw UsageError(name.message());
    }
    const auto database = local_database_named(options);
    if (!database || !queue::database_file(*database)) {
        return nullptr;
    }
    return std::make_unique<queue::SqliteQueueBackend>(*database, options.queue, queue::read_only);
}

std::unique_ptr<queue::Submission> open_submission(const QueueOptions& options,
                                                   queue::SubmissionSettings settings)
{
    settings.queue = options.queue;
    if (options.is_local()) {
        return queue::open_sqlite_submission(local_database_of(options), std::move(settings));
    }
    return queue::open_redis_submission(redis_url_of(options), std::move(settings));
}

} // namespace gpusched::cli
