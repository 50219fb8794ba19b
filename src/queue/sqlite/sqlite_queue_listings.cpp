// Reading the SQLite queue: a job, the jobs of a batch, the listing with its counts, the
// workers and the pauses.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include "sqlite_job_rows.hpp"

#include <fmt/format.h>

#include <map>

namespace gpusched::queue {

std::vector<WorkerRecord> SqliteQueue::workers()
{
    auto query = m_database.prepare(
        "SELECT id, host, pid, gpus, since, coalesce(user, '') FROM workers WHERE queue = ? "
        "ORDER BY since");
    query.bind(1, m_name);
    std::vector<WorkerRecord> workers;
    while (query.step()) {
        workers.push_back({query.text(0), query.text(1), query.integer(2), query.text(3),
                           query.real(4), query.text(5)});
    }
    query.reset();
    return workers;
}

std::set<std::string> SqliteQueue::paused()
{
    auto query = m_database.prepare("SELECT gpu FROM pauses WHERE queue = ?");
    query.bind(1, m_name);
    std::set<std::string> gpus;
    while (query.step()) {
        gpus.insert(query.text(0));
    }
    query.reset();
    return gpus;
}

std::optional<JobRecord> SqliteQueue::job(std::int64_t id)
{
    auto query = m_database.prepare(
        fmt::format("SELECT {} FROM jobs WHERE id = ? AND queue = ?", k_job_columns));
    query.bind(1, id).bind(2, m_name);
    auto jobs = read_jobs(query);
    if (jobs.empty()) {
        return std::nullopt;
    }
    return std::move(jobs.front());
}

std::vector<JobDependency> SqliteQueue::dependencies_of(std::int64_t batch)
{
    auto query = m_database.prepare("SELECT after, ok FROM waits WHERE batch = ? ORDER BY after");
    query.bind(1, batch);
    std::vector<JobDependency> after;
    while (query.step()) {
        after.push_back({query.integer(0), query.integer(1) != 0});
    }
    query.reset();
    return after;
}

std::vector<std::int64_t> SqliteQueue::ids_named(const std::string& name)
{
    auto query = m_database.prepare(
        "SELECT jobs.id FROM batches JOIN jobs ON jobs.batch = batches.id WHERE batches.queue = ? "
        "AND batches.name = ? ORDER BY jobs.id");
    return query.bind(1, m_name).bind(2, name).integers();
}

std::optional<std::int64_t> SqliteQueue::latest_of(const std::string& user)
{
    auto query = m_database.prepare(
        "SELECT max(jobs.id) FROM batches JOIN jobs ON jobs.batch = batches.id WHERE "
        "batches.queue = ? AND (batches.user = ? OR batches.user IS NULL)");
    query.bind(1, m_name).bind(2, user);
    std::optional<std::int64_t> latest;
    if (query.step() && !query.is_null(0)) {
        latest = query.integer(0);
    }
    query.reset();
    return latest;
}

std::vector<std::int64_t> SqliteQueue::unended()
{
    auto query = m_database.prepare(
        "SELECT id FROM jobs WHERE queue = ? AND state IN ('queued', 'running', 'waiting') ORDER "
        "BY id");
    return query.bind(1, m_name).integers();
}

std::vector<JobRecord> SqliteQueue::jobs_of(const std::vector<std::int64_t>& ids)
{
    std::vector<JobRecord> jobs;
    auto query = m_database.prepare(
        fmt::format("SELECT {} FROM jobs WHERE id = ? AND queue = ?", k_job_columns));
    for (const auto id : ids) {
        query.bind(1, id).bind(2, m_name);
        auto found = read_jobs(query);
        jobs.insert(jobs.end(), found.begin(), found.end());
    }
    // What a waiting job waits for, as a listing and a Redis queue tell it.
    for (auto& job : jobs) {
        if (job.state == JobState::waiting) {
            job.after = dependencies_of(job.batch);
        }
    }
    return jobs;
}

std::vector<JobRecord> SqliteQueue::batch_ended_since(std::int64_t batch, double since)
{
    // Through jobs_ended (`+batch` keeps the planner off jobs_of_batch): the few jobs of the
    // queue that ended since, not every job of the batch.
    auto& ended = m_database.prepare_kept(fmt::format(
        "SELECT {} FROM jobs WHERE queue = ? AND ended >= ? AND +batch = ? ORDER BY ended",
        k_job_columns));
    ended.bind(1, m_name).bind(2, since).bind(3, batch);
    return read_jobs(ended);
}

SqliteQueue::BatchProgress SqliteQueue::batch_progress(std::int64_t batch)
{
    BatchProgress progress;
    m_database.read([&] {
        auto ended = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE batch = ? AND state NOT IN ('queued', 'running', "
            "'waiting') ORDER BY ended",
            k_job_columns));
        ended.bind(1, batch);
        progress.ended = read_jobs(ended);
        auto unended = m_database.prepare(
            "SELECT count(*) FROM jobs WHERE batch = ? AND state IN ('queued', 'running', "
            "'waiting')");
        unended.bind(1, batch).step();
        progress.unended = unended.integer(0);
        unended.reset();
    });
    return progress;
}

QueueListing SqliteQueue::list(std::size_t queued_shown, std::size_t recent_shown,
                               std::size_t queued_from)
{
    QueueListing listing;
    // One read transaction: the counts and the lists agree with each other.
    m_database.read([&] {
        // Counted through the indexes, not by a scan of every job: the queued through
        // jobs_queued, the ended (each has its `ended` time) through jobs_ended.
        auto queued_count =
            m_database.prepare("SELECT count(*) FROM jobs WHERE queue = ? AND state = 'queued'");
        queued_count.bind(1, m_name).step();
        listing.queued = queued_count.integer(0);
        queued_count.reset();
        auto count = m_database.prepare("SELECT state, count(*) FROM jobs WHERE queue = ? AND "
                                        "ended IS NOT NULL GROUP BY state");
        count.bind(1, m_name);
        while (count.step()) {
            const auto state = state_of(count.text(0));
            const auto number = count.integer(1);
            switch (state) {
            case JobState::queued:
                listing.queued = number;
                break;
            case JobState::succeeded:
                listing.succeeded = number;
                break;
            case JobState::failed:
                listing.failed = number;
                break;
            case JobState::cancelled:
                listing.cancelled = number;
                break;
            case JobState::refused:
                listing.refused = number;
                break;
            case JobState::skipped:
                listing.skipped = number;
                break;
            case JobState::running:
            case JobState::waiting:
                break;
            }
        }
        count.reset();
        auto queued = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND state = 'queued' ORDER BY priority DESC, "
            "position LIMIT ? OFFSET ?",
            k_job_columns));
        queued.bind(1, m_name)
            .bind(2, static_cast<std::int64_t>(queued_shown))
            .bind(3, static_cast<std::int64_t>(queued_from));
        listing.first_queued = read_jobs(queued);
        // Only the batches that wait for others can have waiting jobs: found through `waits`,
        // so that no index on jobs costs every take and every end a look.
        auto waiting_count = m_database.prepare(
            "SELECT count(*) FROM jobs WHERE queue = ? AND state = 'waiting' AND batch IN "
            "(SELECT batch FROM waits)");
        waiting_count.bind(1, m_name).step();
        listing.waiting = waiting_count.integer(0);
        waiting_count.reset();
        auto waiting = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND state = 'waiting' AND batch IN (SELECT batch "
            "FROM waits) ORDER BY id LIMIT ?",
            k_job_columns));
        waiting.bind(1, m_name).bind(2, static_cast<std::int64_t>(queued_shown));
        listing.first_waiting = read_jobs(waiting);
        std::map<std::int64_t, std::vector<JobDependency>> waits_of_batch; // read once a batch
        for (auto& job : listing.first_waiting) {
            auto found = waits_of_batch.find(job.batch);
            if (found == waits_of_batch.end()) {
                found = waits_of_batch.emplace(job.batch, dependencies_of(job.batch)).first;
            }
            job.after = found->second;
        }
        // `+id`: the few running jobs (jobs_running) are sorted, rather than every job
        // walked in id order.
        auto running = m_database.prepare(
            fmt::format("SELECT {} FROM jobs WHERE queue = ? AND state = 'running' ORDER BY +id",
                        k_job_columns));
        running.bind(1, m_name);
        listing.running = read_jobs(running);
        auto recent = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND ended IS NOT NULL ORDER BY ended DESC "
            "LIMIT ?",
            k_job_columns));
        recent.bind(1, m_name).bind(2, static_cast<std::int64_t>(recent_shown));
        listing.recent = read_jobs(recent);
        listing.workers = workers();
        listing.paused = paused();
    });
    return listing;
}

} // namespace gpusched::queue
