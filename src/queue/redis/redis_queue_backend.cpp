#include <gpusched/queue/redis/redis_queue_backend.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace gpusched::queue {
namespace {

double seconds_of(const std::string& text)
{
    return text.empty() ? 0 : std::atof(text.c_str());
}

JobState state_of(const QueuedJob& job, bool pending)
{
    const auto& outcome = job.field("outcome");
    if (outcome.empty()) {
        if (!job.field("waits").empty()) {
            return JobState::waiting;
        }
        return pending ? JobState::queued : JobState::running;
    }
    for (const auto state :
         {JobState::succeeded, JobState::failed, JobState::cancelled, JobState::skipped}) {
        if (outcome == to_string(state)) {
            return state;
        }
    }
    return JobState::refused;
}

std::int64_t count_of(const std::map<std::string, std::string>& stats, const char* name)
{
    const auto found = stats.find(name);
    return found == stats.end() ? 0 : std::max<std::int64_t>(0, std::atoll(found->second.c_str()));
}

std::string tail_from(const std::string& tail, std::uint64_t from, std::uint64_t most)
{
    return from >= tail.size() ? std::string() : tail.substr(from, most);
}

} // namespace

// "12 13!": what a job waits for, '!' marking a job whose success it needs.
std::vector<JobDependency> dependencies_of(const std::string& after)
{
    std::vector<JobDependency> dependencies;
    std::istringstream words(after);
    std::string word;
    while (words >> word) {
        const bool ok = word.back() == '!';
        dependencies.push_back({std::atoll(word.c_str()), ok});
    }
    return dependencies;
}

JobRecord to_record(const QueuedJob& job, const std::string& queue, bool pending)
{
    JobRecord record;
    record.id = std::atoll(job.id.c_str());
    record.queue = queue;
    record.command = job.field("command");
    record.batch = std::atoll(job.field("batch").c_str());
    record.priority = std::atoll(job.field("priority").c_str());
    record.state = state_of(job, pending);
    record.submitted = seconds_of(job.field("submitted"));
    if (record.state != JobState::queued && record.state != JobState::waiting) {
        // A job given back to the queue keeps where it last started until it starts again.
        record.worker = job.field("worker");
        record.gpu = job.field("gpu");
        record.started = seconds_of(job.field("started"));
    }
    record.ended = seconds_of(job.field("ended"));
    record.runtime = seconds_of(job.field("runtime"));
    record.exit_code = std::atoi(job.field("exit").c_str());
    record.signal = std::atoi(job.field("signal").c_str());
    record.note = job.field("note");
    record.peak_memory = peak_memory_of(job.field("peak"));
    record.memory_asked = memory_asked_of(job.field("mem"));
    record.memory_reruns = memory_reruns_of(job.field("oom_reruns"));
    record.cancel_requested = job.field("cancel") == "1";
    record.directory = job.field("dir");
    record.name = job.field("name");
    record.after = dependencies_of(job.field("after"));
    record.submitter.user = job.field("user");
    record.submitter.host = job.field("from");
    if (const auto uid = parse_number<std::int64_t>(job.field("uid")); uid && *uid >= 0) {
        record.submitter.uid = *uid;
    }
    // Counted on each job submitted since the count was kept there; unknown before.
    record.returned = parse_number<std::int64_t>(job.field("returned"));
    return record;
}

RedisQueueBackend::RedisQueueBackend(const RedisUrl& url, std::string name,
                                     std::optional<std::string> key,
                                     std::chrono::milliseconds timeout)
    : m_redis(url, timeout), m_queue(std::move(name)), m_key(std::move(key))
{
    checked(m_redis.connect());
}

template <typename T>
T RedisQueueBackend::checked(Result<T> answer)
{
    if (!answer) {
        throw_redis_failure(describe(), answer.failure());
    }
    return std::move(*answer);
}

void RedisQueueBackend::checked(Result<void> done)
{
    if (!done) {
        throw_redis_failure(describe(), done.failure());
    }
}

std::string RedisQueueBackend::describe() const
{
    return fmt::format("queue {} on {}", m_queue.name(), describe_redis_url(m_redis.url()));
}

QueueListing RedisQueueBackend::list(const ListingWindow& shown)
{
    const auto snapshot =
        checked(m_queue.snapshot(m_redis, shown.queued, shown.recent, shown.queued_from));
    QueueListing listing;
    listing.queued = snapshot.pending;
    for (const auto& job : snapshot.first_pending) {
        listing.first_queued.push_back(to_record(job, m_queue.name(), true));
    }
    for (const auto& job : snapshot.taken_jobs) {
        auto record = to_record(job, m_queue.name(), false);
        if (record.state != JobState::running) {
            continue; // ended as it was read
        }
        for (const auto& worker : snapshot.workers) {
            if (std::find(worker.taken.begin(), worker.taken.end(), job.id) != worker.taken.end()) {
                record.worker = worker.id;
            }
        }
        listing.running.push_back(std::move(record));
    }
    for (const auto& job : snapshot.recent) {
        listing.recent.push_back(to_record(job, m_queue.name(), false));
    }
    for (const auto& worker : snapshot.workers) {
        listing.workers.push_back(RedisQueue::worker_record(worker.id, worker.fields));
    }
    listing.paused = snapshot.paused;
    listing.succeeded = count_of(snapshot.stats, "succeeded");
    listing.failed = count_of(snapshot.stats, "failed");
    listing.cancelled = count_of(snapshot.stats, "cancelled");
    listing.refused = count_of(snapshot.stats, "refused");
    listing.skipped = count_of(snapshot.stats, "skipped");
    listing.waiting = snapshot.waiting;
    for (const auto& job : snapshot.first_waiting) {
        listing.first_waiting.push_back(to_record(job, m_queue.name(), false));
    }
    listing.returned = count_of(snapshot.stats, "returned");
    return listing;
}

std::vector<JobRecord> RedisQueueBackend::jobs(const std::vector<std::int64_t>& ids)
{
    std::vector<std::string> names;
    for (const auto id : ids) {
        names.push_back(std::to_string(id));
    }
    const auto found = checked(m_queue.jobs(m_redis, names));
    std::vector<JobRecord> records;
    for (const auto& job : found.jobs) {
        records.push_back(to_record(job, m_queue.name(), found.pending.contains(job.id)));
    }
    return records;
}

std::optional<std::int64_t> RedisQueueBackend::latest_of(const std::string& user)
{
    // Ids count up as jobs are submitted by anyone: the latest of ours is found looking back
    // from the last id given out, a block at a time, as far as a busy queue's week of jobs.
    constexpr std::int64_t k_block = 200;
    constexpr std::int64_t k_most_looked_at = 100'000;
    const auto last = static_cast<std::int64_t>(checked(m_queue.last_id(m_redis)));
    for (auto top = last; top > 0 && last - top < k_most_looked_at; top -= k_block) {
        std::vector<std::int64_t> ids;
        for (auto id = top; id > std::max<std::int64_t>(0, top - k_block); --id) {
            ids.push_back(id);
        }
        for (const auto& job : jobs(ids)) {
            if (job.submitter.user == user || job.submitter.user.empty()) {
                return job.id; // the records come in the order asked: the highest first
            }
        }
    }
    return std::nullopt;
}

std::vector<JobRecord> RedisQueueBackend::newest(const JobsWanted& wanted)
{
    return checked(newest_jobs(m_redis, m_queue, wanted));
}

std::vector<std::int64_t> RedisQueueBackend::ids_named(const std::string& name)
{
    std::vector<std::int64_t> ids;
    for (const auto& id : checked(m_queue.named(m_redis, name))) {
        ids.push_back(std::atoll(id.c_str()));
    }
    std::sort(ids.begin(), ids.end());
    // Those whose record is gone (purged, expired) are not named any more.
    std::vector<std::int64_t> found;
    for (const auto& job : jobs(ids)) {
        found.push_back(job.id);
    }
    return found;
}

bool RedisQueueBackend::ask_worker_to_stop(const std::string& worker, bool now)
{
    return checked(m_queue.ask_to_stop(m_redis, worker, now));
}

std::vector<std::int64_t> RedisQueueBackend::unended()
{
    std::vector<std::int64_t> ids;
    for (const auto& id : checked(m_queue.unended(m_redis))) {
        ids.push_back(std::atoll(id.c_str()));
    }
    return ids;
}

CancelOutcome RedisQueueBackend::cancel(std::int64_t id)
{
    switch (checked(m_queue.cancel(m_redis, std::to_string(id)))) {
    case RedisQueue::Cancelled::removed: return CancelOutcome::removed;
    case RedisQueue::Cancelled::stopping: return CancelOutcome::stopping;
    case RedisQueue::Cancelled::already_ended: return CancelOutcome::already_ended;
    case RedisQueue::Cancelled::unknown: break;
    }
    return CancelOutcome::unknown;
}

Result<void> RedisQueueBackend::retry(std::int64_t id)
{
    return m_queue.retry(m_redis, std::to_string(id), m_key);
}

void RedisQueueBackend::pause(const std::string& gpu)
{
    checked(m_queue.pause(m_redis, gpu));
}

void RedisQueueBackend::resume(const std::string& gpu)
{
    checked(m_queue.resume(m_redis, gpu));
}

std::int64_t RedisQueueBackend::purge(std::optional<double> ended_before)
{
    return checked(m_queue.purge(m_redis, ended_before));
}

JobOutput RedisQueueBackend::output(const JobRecord& job, std::uint64_t out_from,
                                    std::uint64_t err_from, std::uint64_t most)
{
    // The worker sends the tails with the result: nothing is known before the job ends.
    if (!job.ended_state()) {
        return {};
    }
    const auto found = checked(m_queue.fetch(m_redis, std::to_string(job.id)));
    return {tail_from(found.field("out_tail"), out_from, most),
            tail_from(found.field("err_tail"), err_from, most), found.field("complete") != "0"};
}

QueueBackend::OutputSizes RedisQueueBackend::output_sizes(const JobRecord& job)
{
    if (!job.ended_state()) {
        return {};
    }
    const auto found = checked(m_queue.fetch(m_redis, std::to_string(job.id)));
    return {found.field("out_tail").size(), found.field("err_tail").size()};
}

} // namespace gpusched::queue
