#pragma once

#include <gpusched/queue/queue_backend.hpp>
#include <gpusched/queue/sqlite/database_changes.hpp>
#include <gpusched/queue/sqlite/database_file.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include <chrono>
#include <filesystem>
#include <optional>

namespace gpusched::queue {

// A local queue (an SQLite database on this machine) for the queue commands. Opening it
// returns the jobs of workers that are gone to the queue, so what it shows is current;
// changes that concern workers (a cancel, a retry, a resume) wake them. Each call first checks
// that the path still names the file opened: a removed or replaced database throws QueueGone
// rather than answer from a file nobody else sees, or mix its jobs' ids with the new one's.
class SqliteQueueBackend final : public QueueBackend {
public:
    SqliteQueueBackend(std::filesystem::path database, std::string name,
                       WhenMissing missing = WhenMissing::make);
    // Opened to read only, for the shells' completion: nothing is made, brought up to date,
    // reclaimed or woken; a missing database is QueueGone, and a verb that would change the
    // queue fails as on a file that cannot be written.
    SqliteQueueBackend(std::filesystem::path database, std::string name, ReadOnly);

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
    // Until the database is written (each commit: a job taken, ended, cancelled), or the path
    // names another file than at the last wait (removed, or made anew).
    bool wait_for_change(std::chrono::milliseconds most) override;

private:
    void reclaim_gone_workers();
    // Throws QueueGone when the path no longer names the file opened.
    void check_file() const;

    std::filesystem::path m_path;
    std::optional<DatabaseFile> m_file;         // as opened
    std::optional<DatabaseFile> m_file_watched; // as the last wait_for_change saw it
    Database m_database;
    SqliteQueue m_queue;
    std::optional<DatabaseChanges> m_changes; // made at the first wait
    bool m_read_only = false;
    std::chrono::steady_clock::time_point m_next_reclaim = std::chrono::steady_clock::now() +
                                                           std::chrono::seconds(1);
};

// Removes ended jobs (those that ended before `ended_before`, if given) with their output
// files; how many. For `queue --purge`, and for workers, which let old results expire.
std::int64_t purge_ended_jobs(SqliteQueue& queue, std::optional<double> ended_before);

// The newest jobs of the queue that `wanted` takes, highest id first (sqlite_newest_jobs.cpp).
std::vector<JobRecord> newest_jobs(SqliteQueue& queue, const JobsWanted& wanted);

} // namespace gpusched::queue
