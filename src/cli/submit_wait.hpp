#pragma once

#include "redis_retry.hpp"

#include <gpusched/queue/redis/redis_queue.hpp>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace gpusched::cli {

// What one `submit` has put in the queue, and following it to its end (--wait), with the two
// faults a queue can have told apart: Redis out of reach for longer than the retry policy
// allows (RedisUnreachable, exit status 75), and a queue that was reset since the jobs went in
// (FLUSHALL, or Redis restarted without its data), which loses them (std::runtime_error,
// exit status 255). The queue's marker, taken by open(), tells the second: it is checked
// after every reconnection, after each chunk submitted and on every round of the wait.
class Submission {
public:
    Submission(RedisConnection& redis, const queue::RedisQueue& jobs);

    // Makes the queue's marker if need be, and remembers it.
    void open();

    // Runs a queue operation (safe to repeat) under the retry policy, checking the marker
    // after a reconnection.
    template <class Operation>
    auto call(Operation operation)
    {
        return m_redis.with_retry(operation, [this] { check_marker_now(); });
    }

    // Throws when the queue's marker is gone or changed.
    void check_marker();

    // `ids` are being submitted: they may be in the queue from now on.
    void add(const std::vector<std::string>& ids);
    // Those added are in the queue, as far as can be told.
    void confirm() { m_confirmed = m_ids.size(); }
    std::size_t size() const { return m_ids.size(); }
    // What a submission cut short left behind: "nothing was submitted", or which ids were.
    std::string describe_submitted() const;

    // Follows the jobs of `batch` until each has ended, logging each end; the number that
    // failed. Throws RedisUnreachable naming the jobs whose outcome is unknown, or
    // std::runtime_error naming those that were lost.
    std::size_t wait(const std::string& batch);

private:
    // After a reconnection: as check_marker(), but a connection lost again is left to the
    // retry that follows.
    void check_marker_now();
    [[noreturn]] void reset() const;
    std::vector<std::string> unreported() const;

    RedisConnection& m_redis;
    const queue::RedisQueue& m_jobs;
    std::string m_marker;
    std::vector<std::string> m_ids; // in the order submitted
    std::size_t m_confirmed = 0;
    bool m_waiting = false;
    std::set<std::string> m_reported; // ended, or lost
    std::vector<std::string> m_lost;  // the record gone though the queue was not reset
};

// "3, 4, 7", the first 20 of them, then "and 12 more".
std::string list_ids(const std::vector<std::string>& ids);

} // namespace gpusched::cli
