#pragma once

#include <gpusched/result.hpp>
#include <gpusched/job_context.hpp>
#include <gpusched/queue/job_record.hpp>
#include <gpusched/queue/sqlite/sqlite_database.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpusched::queue {

struct NewSqliteJob {
    std::string command;
};

struct PurgedJob {
    std::int64_t id = 0;
    std::string output; // the directory its output files are in, if any
};

// Where, with what and as whom the jobs of a batch run, and the label they go by.
struct BatchOrigin {
    JobContext context;
    Submitter submitter;
    std::string name{};
    // Why its request cannot be read (a row no gpusched of this version wrote): its jobs are
    // refused, never run without what they asked.
    std::optional<std::string> unreadable{};
};

struct SubmitOrder {
    std::int64_t priority = 0;
    bool front = false; // ahead of every queued job of its priority
    const BatchOrigin* origin = nullptr; // for a new batch; none: its jobs run as the worker does
    // Where the next --front job of the batch goes, once its first chunk reserved the place.
    std::optional<std::int64_t> front_next{};
    // What a new batch waits for.
    std::vector<JobDependency> after{};
};

// A queue kept in an SQLite database: the jobs of every queue NAME in one file, each taken by
// one worker at a time in one transaction, each result recorded once. Nothing here waits: a
// worker is told of new jobs by a wake-up (see SqliteWorkerStore) and asks again.
//
// A worker's death is noticed without heartbeats: it holds a liveness mark while it lives (an
// abstract socket, as leases do; see worker_presence.hpp), and any process that finds a
// worker's mark gone returns that worker's running jobs to the front of the queue.
class SqliteQueue {
public:
    SqliteQueue(Database& database, std::string name);

    const std::string& name() const { return m_name; }
    Database& database() { return m_database; }

    // Submitting: the jobs go in as one batch, in one transaction; their ids, in order.
    struct Submitted {
        std::int64_t batch = 0;
        std::vector<std::int64_t> ids;
    };
    Submitted submit(const std::vector<NewSqliteJob>& jobs, SubmitOrder order);
    // Adds to an existing batch (a submission read in chunks), the same `order` for each
    // chunk: it keeps where the batch's --front jobs go.
    std::vector<std::int64_t> submit_to(std::int64_t batch, const std::vector<NewSqliteJob>& jobs,
                                        SubmitOrder& order);
    // A batch waiting for `after` (each of which must be a job of the queue) starts its jobs
    // in state waiting until they end; then queued, or skipped when one that had to succeed
    // did not.
    std::int64_t new_batch(const BatchOrigin* origin = nullptr,
                           const std::vector<JobDependency>& after = {});
    // Where, with what and as whom the jobs of `batch` run; nothing for a batch queued before
    // that was recorded.
    std::optional<BatchOrigin> batch_origin(std::int64_t batch);

    // Workers.
    void add_worker(const WorkerRecord& worker);
    void remove_worker(const std::string& worker);
    // Asks `worker` to stop: to finish its running jobs and start none (a drain), or `now`, as
    // SIGTERM stops it; false when the queue has no such worker.
    bool ask_to_stop(const std::string& worker, bool now);
    // How `worker` was asked to stop (true: now), if it was.
    std::optional<bool> stop_asked(const std::string& worker);
    std::vector<WorkerRecord> workers();
    // Returns the running jobs of every worker `alive` says is dead to the front of the
    // queue and forgets those workers; how many jobs went back.
    std::int64_t reclaim(const std::function<bool(const WorkerRecord&)>& alive);

    // Takes the next queued job for `worker`, or nothing when none is queued or the queue is
    // paused. The job is running from then on, as the worker's.
    // `output` is the directory its output files go to, for `gpusched logs`; with `gpus`, a job
    // asking for more GPUs is passed by.
    std::optional<JobRecord> take(const std::string& worker, const std::string& output = "",
                                  std::optional<std::int64_t> gpus = std::nullopt);
    // Undoes the take of job `id` in the same write transaction: it is queued where it was.
    void untake(const std::string& worker, std::int64_t id);
    // Records a job's end once: false when the job is no longer this worker's (it was
    // reclaimed from a worker thought dead) or already ended.
    bool finish(const std::string& worker, const JobResult& result);
    // Notes where and when a job of `worker` started, for the listing.
    void note_start(const std::string& worker, std::int64_t id, const std::string& gpu,
                    double started);
    // Puts a job the worker took back at the front, unfinished: one it did not start, or one
    // it stopped (counted in `returned`).
    bool give_back(const std::string& worker, std::int64_t id);
    // The running jobs of `worker` that someone asked to cancel.
    std::vector<std::int64_t> cancel_requests(const std::string& worker);

    // Changing the queue.
    CancelOutcome cancel(std::int64_t id);
    // Queues again a job that ended other than succeeded; false when it cannot be.
    Result<void> retry(std::int64_t id);
    void pause(const std::string& gpu);  // "" for the whole queue
    void resume(const std::string& gpu); // "" for the whole queue and every GPU
    std::set<std::string> paused();
    // Removes ended jobs (those that ended before `before`, seconds since the epoch, if
    // given); which, with where their output is. The batches left with no job go too.
    std::vector<PurgedJob> purge(std::optional<double> before);

    // Reading.
    std::optional<JobRecord> job(std::int64_t id);
    std::vector<JobRecord> jobs_of(const std::vector<std::int64_t>& ids);
    QueueListing list(std::size_t queued_shown, std::size_t recent_shown,
                      std::size_t queued_from = 0);
    // The ids of the jobs queued or running.
    std::vector<std::int64_t> unended();
    // The ids of the jobs labelled `name`, in order.
    std::vector<std::int64_t> ids_named(const std::string& name);
    // The latest job `user` submitted (or one of a batch that recorded no user).
    std::optional<std::int64_t> latest_of(const std::string& user);
    // What the jobs of `batch` wait for.
    std::vector<JobDependency> dependencies_of(std::int64_t batch);
    // The ended jobs of a batch, and how many of it have not ended.
    struct BatchProgress {
        std::vector<JobRecord> ended;
        std::int64_t unended = 0;
    };
    BatchProgress batch_progress(std::int64_t batch);
    // The jobs of a batch that ended at `since` (seconds since the epoch) or later.
    std::vector<JobRecord> batch_ended_since(std::int64_t batch, double since);

private:
    void forget_empty_batches();
    // The state the jobs of `batch` are in now by what they wait for: queued, waiting, or
    // skipped (and why).
    struct StartState {
        JobState state = JobState::queued;
        std::string why;  // of a skip: "job 12 failed"
        std::string note; // what a skipped job's record says
    };
    StartState start_state(std::int64_t batch);
    // Job `ended` has ended (inside a write transaction): the jobs waiting for it are queued
    // or skipped where nothing else holds them.
    void settle_waiting(std::int64_t ended);

    // Puts job `id` back at the front of the queue (inside a write transaction), setting
    // also `also_set` (SQL assignments) if given.
    void to_front(std::int64_t id, std::string_view also_set);

    Database& m_database;
    std::string m_name;
};

// Makes the tables when the database is new (and checks its version when it is not).
void prepare_sqlite_queue_schema(Database& database);

} // namespace gpusched::queue
