#pragma once

#include <gpusched/queue/submission.hpp>
#include <gpusched/redis_url.hpp>

#include <memory>

namespace gpusched::queue {

// A submission to the Redis queue settings.queue at `url`, connecting at once. Redis is
// reached again after a lost connection, within settings.connect_timeout (QueueUnreachable
// when it gives up, naming what was submitted or whose outcome is unknown); a queue reset
// since the jobs went in (FLUSHALL, Redis restarted without its data) loses them, which is
// thrown naming them. The queue's marker tells a reset: it is checked after every
// reconnection, after each chunk and on every round of a wait.
std::unique_ptr<Submission> open_redis_submission(const RedisUrl& url, SubmissionSettings settings);

} // namespace gpusched::queue
