#pragma once

#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/queue/queue_backend.hpp>
#include <gpusched/queue/redis/redis_client.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace gpusched::queue {

// A queue on a Redis server for the queue commands. Every call is one short exchange (a
// pipeline or a script of the protocol); a Redis that cannot be reached, or that answers with
// an error, is an exception naming the server (QueueRefused where it refused the password).
// A retry the queue refuses is its Failure, of RedisQueue::retry's kinds.
class RedisQueueBackend final : public QueueBackend {
public:
    // `key` signs the next attempt of a job queued again (retry), for workers that check
    // signatures.
    // `timeout` bounds the connection and each exchange: a person waits 5 s, a shell
    // completing a word far less.
    RedisQueueBackend(const RedisUrl& url, std::string name,
                      std::optional<std::string> key = std::nullopt,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5));

    std::string describe() const override;
    QueueListing list(const ListingWindow& shown) override;
    std::vector<JobRecord> jobs(const std::vector<std::int64_t>& ids) override;
    std::vector<std::int64_t> unended() override;
    std::vector<std::int64_t> ids_named(const std::string& name) override;
    std::optional<std::int64_t> latest_of(const std::string& user) override;
    std::vector<JobRecord> newest(const JobsWanted& wanted) override;
    bool ask_worker_to_stop(const std::string& worker, bool now) override;
    CancelOutcome cancel(std::int64_t id) override;
    Result<void> retry(std::int64_t id) override;
    void pause(const std::string& gpu) override;
    void resume(const std::string& gpu) override;
    std::int64_t purge(std::optional<double> ended_before) override;
    JobOutput output(const JobRecord& job, std::uint64_t out_from, std::uint64_t err_from,
                     std::uint64_t most) override;
    OutputSizes output_sizes(const JobRecord& job) override;

private:
    // The answer, or the failure thrown naming the queue.
    template <typename T>
    T checked(Result<T> answer);
    void checked(Result<void> done);

    RedisClient m_redis;
    RedisQueue m_queue;
    std::optional<std::string> m_key;
};

// A job as the queue commands see it, from its hash; `running` when it is not pending and
// has no outcome (a worker took it).
JobRecord to_record(const QueuedJob& job, const std::string& queue, bool pending);

// The newest jobs of the queue that `wanted` takes, highest id first (redis_newest_jobs.cpp).
Result<std::vector<JobRecord>> newest_jobs(RedisClient& redis, const RedisQueue& queue,
                                           const JobsWanted& wanted);

} // namespace gpusched::queue
