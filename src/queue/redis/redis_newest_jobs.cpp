// The newest jobs a shell's completion offers from a Redis queue. Redis is asked by id, and
// ids count up as jobs are submitted: the ids that begin as typed are looked at from the last
// one given out down, a block a round trip, until enough are found.
#include <gpusched/queue/redis/redis_queue_backend.hpp>

#include <algorithm>
#include <cctype>

namespace gpusched::queue {
namespace {

constexpr std::size_t k_block = 200;
// A completion must answer at once: on a queue of many other users' jobs it looks this far
// back at most (50 round trips).
constexpr std::size_t k_most_ids_looked_at = 10'000;
// What JobsWanted and a job's description need of its hash: not its environment's digest,
// nor the tails of its output (up to 64 KiB each).
const std::vector<std::string> k_fields = {"command",   "batch", "name",    "user",
                                           "uid",       "from",  "outcome", "waits",
                                           "submitted", "ended", "gpu",     "worker"};

bool is_digits(const std::string& text)
{
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

} // namespace

Result<std::vector<JobRecord>> newest_jobs(RedisClient& redis, const RedisQueue& queue,
                                           const JobsWanted& wanted)
{
    const auto last = queue.last_id(redis);
    if (!last) {
        return last.failure();
    }
    // Queued and running jobs look alike in their hashes: a running one is in a worker's
    // taken list.
    std::set<std::string> taken;
    const auto& states = wanted.states;
    if (states.empty() ||
        std::find(states.begin(), states.end(), JobState::queued) != states.end() ||
        std::find(states.begin(), states.end(), JobState::running) != states.end()) {
        auto ids = queue.taken_ids(redis);
        if (!ids) {
            return ids.failure();
        }
        taken = std::move(*ids);
    }
    // A label's beginning is looked for among the latest jobs; an id's, among the ids that
    // begin so.
    IdsBeginningWith ids(*last, is_digits(wanted.prefix) ? wanted.prefix : "");
    std::vector<JobRecord> found;
    for (std::size_t looked = 0; found.size() < wanted.most && looked < k_most_ids_looked_at;) {
        const auto block = ids.next(k_block);
        if (block.empty()) {
            break;
        }
        looked += block.size();
        std::vector<std::string> names;
        for (const auto id : block) {
            names.push_back(std::to_string(id));
        }
        const auto jobs = queue.job_fields(redis, names, k_fields);
        if (!jobs) {
            return jobs.failure();
        }
        for (const auto& job : *jobs) {
            auto record = to_record(job, queue.name(), !taken.contains(job.id));
            if (found.size() < wanted.most && wanted.wants(record)) {
                found.push_back(std::move(record));
            }
        }
    }
    return found;
}

} // namespace gpusched::queue
