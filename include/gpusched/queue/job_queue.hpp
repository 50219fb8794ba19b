#pragma once

#include <gpusched/queue/redis_client.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::queue {

// A job as the queue keeps it (the hash gpusched:QUEUE:job:ID).
struct QueuedJob {
    std::string id;
    std::map<std::string, std::string> fields; // command, batch, seq, sig, outcome, ...
    const std::string& field(const std::string& name) const;
};

struct JobResult {
    std::string id;
    std::string outcome; // succeeded, failed, refused
    int exit_code = 0;
    int signal = 0;
    std::string host;
    std::string gpu;
    double started = 0;
    double runtime = 0;
    std::string note; // why a job was refused
};

struct QueueStatus {
    long long pending = 0;
    struct Running {
        std::string id, worker, host, gpu, started, command;
    };
    std::vector<Running> running;
    long long submitted = 0, succeeded = 0, failed = 0, refused = 0;
    std::vector<QueuedJob> failures; // the latest ones
};

// The Redis side of the queue NAME. Keys start with gpusched:NAME:
//   next_id, next_batch      counters
//   pending                  list of job ids waiting for a worker (taken from the left)
//   job:ID                   hash: command, batch, seq, sig, submitted; then worker, host, gpu,
//                            started; then outcome, exit, signal, runtime, ended
//   taken:WORKER             list of the ids a worker has taken (moved there atomically)
//   workers                  sorted set: worker -> its last heartbeat (server time, ms)
//   stats, failures          counts by outcome; the ids of the latest failures
//   batch:B:done             list of the ids of batch B that have ended, for `submit --wait`
// Every step that must not half-happen is one Lua script, run atomically by Redis.
class JobQueue {
public:
    explicit JobQueue(std::string name);

    const std::string& name() const { return m_name; }

    // The queue's marker: a random word set once, when the queue is first used (SET NX),
    // and read back. A queue whose marker is gone or has changed was reset (FLUSHALL, a
    // Redis restarted without its data): what it held is lost. open() makes it if need be
    // and returns it; marker() reads it ("" when there is none).
    std::optional<std::string> open(RedisClient& redis) const;
    std::optional<std::string> marker(RedisClient& redis) const;

    // Submitting: ids for `count` jobs (the last of them), a batch number, then the jobs.
    std::optional<long long> reserve_ids(RedisClient& redis, long long count) const;
    std::optional<long long> new_batch(RedisClient& redis) const;
    struct NewJob {
        std::string id, command, seq, signature;
    };
    // Idempotent: a job already submitted under its id is not queued again.
    bool submit(RedisClient& redis, const std::string& batch,
                const std::vector<NewJob>& jobs) const;
    // The ids of batch `batch` that ended since the last call, waiting up to `timeout_s`.
    std::optional<std::vector<std::string>> wait_ended(RedisClient& redis, const std::string& batch,
                                                       double timeout_s) const;
    // Every id of batch `batch` wait_ended has returned so far (or lost with a connection).
    std::optional<std::vector<std::string>> ended_ids(RedisClient& redis,
                                                      const std::string& batch) const;

    // Working: the blocking take is sent on its own connection, its reply (the id) read later.
    bool send_take(RedisClient& take, const std::string& worker) const;
    std::optional<QueuedJob> fetch(RedisClient& redis, const std::string& id) const;
    bool mark_started(RedisClient& redis, const std::string& id, const std::string& worker,
                      const std::string& host, const std::string& gpu, double started) const;
    // Records a job's result once (a late duplicate changes nothing) and drops it from the
    // worker's taken list.
    bool finish(RedisClient& redis, const std::string& worker, const JobResult& result) const;
    // Puts a job the worker will not run back at the head of the queue.
    bool give_back(RedisClient& redis, const std::string& worker, const std::string& id) const;
    // Notes the worker alive, and returns to the queue the jobs of workers silent for longer
    // than `lease_timeout_ms`; the number of jobs returned.
    std::optional<long long> heartbeat(RedisClient& redis, const std::string& worker,
                                       const std::string& description,
                                       long long lease_timeout_ms) const;
    std::optional<std::vector<std::string>> taken_by(RedisClient& redis,
                                                     const std::string& worker) const;
    bool forget_worker(RedisClient& redis, const std::string& worker) const;

    std::optional<QueueStatus> status(RedisClient& redis, std::size_t failures) const;

private:
    std::string key(const std::string& suffix) const { return m_prefix + suffix; }

    std::string m_name;
    std::string m_prefix;
};

// A queue name may hold letters, digits, '-', '_' and '.'; anything else is an error.
std::optional<std::string> check_queue_name(const std::string& name);

} // namespace gpusched::queue
