#pragma once

#include <gpusched/job_context.hpp>
#include <gpusched/queue/job_record.hpp>

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpusched::queue {

// A job a store took for its worker, and what the store found of it. The worker decides
// what becomes of it (QueueWorker::admit): the rules are the same whichever store took it.
struct TakenJob {
    std::int64_t id = 0;
    // Its number among the submission's lines, for messages (the id where there is none).
    std::uint64_t line = 0;
    std::string command;
    // Where and with what it runs (its submitter's), and who submitted it; no context for a
    // job queued before gpusched recorded one: it runs as the worker does.
    SharedJobContext context;
    Submitter submitter;
    // This run of the job: a job queued again (`gpusched retry`) is a new run. A worker never
    // starts the same run twice. Empty where the store itself never hands a run out twice
    // (SQLite's take is a transaction), so that a worker need not remember its runs.
    std::string run;
    // What the store found of its record.
    enum class Record { whole, missing, ended };
    Record record = Record::whole;
    std::string ended_as; // how it ended, when Record::ended
    bool cancel_asked = false;
    // Why its submitter cannot be trusted (unsigned, a wrong signature, another user of a
    // local queue): refused, never run.
    std::optional<std::string> untrusted;
};

// Where a worker's jobs are kept: an SQLite database (SqliteWorkerStore) or a Redis server
// (RedisWorkerStore). The worker (QueueWorker) holds the rules; a store carries out what the
// worker decides, in its own way (one transaction, or asynchronous commands and a spool),
// and tells the worker what it learns through Events. A store never blocks the runner's loop:
// what it waits for is a descriptor in the loop's poll or a deadline.
class WorkerStore {
public:
    using Clock = std::chrono::steady_clock;

    // What a store tells its worker, as it learns it.
    class Events {
    public:
        virtual ~Events() = default;
        // A job taken for this worker.
        virtual void on_taken(TakenJob job) = 0;
        // Someone asked to cancel job `id` of this worker (said again until it ends, where
        // the store cannot tell it was said).
        virtual void on_cancel_asked(std::int64_t id) = 0;
        // The paused GPUs, as read now ("" for the whole queue).
        virtual void on_paused(const std::set<std::string>& paused) = 0;
        // Someone asked this worker to stop (`gpusched worker --stop`): to finish its running
        // jobs and start none, or `now`, as SIGTERM would (said again at each look).
        virtual void on_stop_asked(bool now) = 0;
        // The queue was reset: its ids start again, and what this worker ran says nothing of
        // the jobs to come.
        virtual void on_queue_reset() {}
    };

    virtual ~WorkerStore() = default;

    // Called once, before anything else.
    virtual void attach(Events& events) = 0;
    virtual const std::string& worker_id() const = 0;
    // "queue NAME (PATH)" or "NAME at redis://...", for messages.
    virtual std::string where() const = 0;
    // The GPUs the worker runs jobs on, for listings.
    virtual void set_gpus(std::string gpus) = 0;

    // The store's part of the runner's one poll.
    virtual void add_poll_fds(std::vector<pollfd>& fds) = 0;
    virtual bool on_ready(const pollfd& ready) = 0;
    virtual std::optional<Clock::time_point> next_deadline() const = 0;
    virtual void on_time(Clock::time_point now) = 0;

    // Asks for up to `count` jobs; each comes through Events::on_taken, at once or when the
    // store's server answers. Nothing while an earlier take is still under way.
    virtual void take(std::size_t count) = 0;
    // Where and when a taken job started, for listings.
    virtual void note_start(std::int64_t id, const std::string& gpu) = 0;
    // A job's result, recorded once.
    virtual void record(JobResult result) = 0;
    // A taken job not run goes back to the front of the queue, for any worker.
    virtual void give_back(std::int64_t id) = 0;
    // A taken job this worker cannot run (it asks for more GPUs than the worker has) goes back
    // where the worker's next take passes it by, where the store can put it so; else to the
    // front.
    virtual void pass_by(std::int64_t id) { give_back(id); }
    // The worker is about to sleep: what it owes is written now, not with the next take.
    virtual void flush() {}

    // Descriptors that must stay open while a job of this worker runs (its presence).
    virtual std::vector<int> held_while_jobs_run() const { return {}; }
    // No job runs or will: what is owed is sent, then the worker leaves the queue.
    virtual void leave() = 0;
    // True once the store has sent what it owes, or given up on it.
    virtual bool settled() const = 0;
};

} // namespace gpusched::queue
