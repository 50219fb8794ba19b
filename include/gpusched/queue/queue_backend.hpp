#pragma once

#include <gpusched/result.hpp>
#include <gpusched/queue/job_record.hpp>
#include <gpusched/queue/jobs_wanted.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpusched::queue {

// What a job wrote: its stdout and stderr from the given offsets on. `complete` is false when
// the beginning is missing (a Redis queue keeps only the last 64 KiB of each).
struct JobOutput {
    std::string out;
    std::string err;
    bool complete = true;
};

// What of a queue a listing shows besides its counts, running jobs and workers.
struct ListingWindow {
    std::size_t queued = 0;      // queued jobs (and waiting ones) shown, in the order they run
    std::size_t queued_from = 0; // the position of the first queued job shown (0: the next)
    std::size_t recent = 0;      // ended jobs shown, latest first
};

// The store a backend opened is no longer the one its address names: a local queue's database
// was removed, or replaced by another file. Nothing the backend could still read is the
// queue's, so each of its calls throws this; a backend opened anew (WhenMissing::gone) serves
// the new one, or throws this again while there is none.
class QueueGone : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What opening a queue whose store is missing does: makes it (a first submit, a first look),
// or fails with QueueGone, for a follower opening again a store it had open: an empty queue
// made in place of one the user removed would hide that it was.
enum class WhenMissing { make, gone };

// One queue as the queue commands (queue, cancel, pause, resume, retry, logs, wait) see it,
// whichever backend keeps it: an SQLite database on this machine (SqliteQueueBackend) or a
// Redis server (RedisQueueBackend). Job ids are the queue's own. Every call is one short
// exchange with the backend; none waits for jobs (wait and logs --follow ask again).
class QueueBackend {
public:
    virtual ~QueueBackend() = default;

    // "queue NAME (PATH)" or "queue NAME on redis://HOST:PORT", for messages.
    virtual std::string describe() const = 0;

    // The queue: the queued jobs of `shown` in the order they will run, the running ones, the
    // latest ended ones, its workers and pauses, counts.
    virtual QueueListing list(const ListingWindow& shown) = 0;
    // Jobs by id, those found, in the order asked.
    virtual std::vector<JobRecord> jobs(const std::vector<std::int64_t>& ids) = 0;
    // The ids of the jobs now queued or running.
    virtual std::vector<std::int64_t> unended() = 0;
    // The ids of the jobs labelled `name` (submit --name), in order.
    virtual std::vector<std::int64_t> ids_named(const std::string& name) = 0;
    // The id of the latest job `user` submitted (a job queued before submitters were recorded
    // counts as anyone's), if any is kept: what `logs` without an id shows.
    virtual std::optional<std::int64_t> latest_of(const std::string& user) = 0;
    // The newest jobs `wanted` takes, highest id first, `wanted.most` at most: what a shell
    // offers to complete. A few short reads, however many jobs the queue keeps.
    virtual std::vector<JobRecord> newest(const JobsWanted& wanted) = 0;

    // A queued job is removed (recorded as cancelled); a running one is asked to stop, and
    // its worker records it as cancelled once it has.
    virtual CancelOutcome cancel(std::int64_t id) = 0;
    // Queues again an ended job that did not succeed; why it cannot be, if it cannot.
    virtual Result<void> retry(std::int64_t id) = 0;
    // No new job starts (on GPU `gpu`, or anywhere when it is ""); running jobs go on.
    virtual void pause(const std::string& gpu) = 0;
    // Undoes pause(gpu); "" resumes the whole queue and every GPU.
    virtual void resume(const std::string& gpu) = 0;
    // Asks worker `worker` (an id the listing gives) to stop: to finish its running jobs and
    // start none, or `now`, as SIGTERM stops it. False when the queue has no such worker.
    virtual bool ask_worker_to_stop(const std::string& worker, bool now) = 0;
    // Removes ended jobs and their results (those that ended before `ended_before`, seconds
    // since the epoch, when given); how many.
    virtual std::int64_t purge(std::optional<double> ended_before) = 0;

    // What job `job` wrote, from byte `out_from` of its stdout and `err_from` of its stderr,
    // at most `most` bytes of each (a page that follows a job of gigabytes asks for a piece).
    static constexpr std::uint64_t k_all = std::numeric_limits<std::uint64_t>::max();
    virtual JobOutput output(const JobRecord& job, std::uint64_t out_from, std::uint64_t err_from,
                             std::uint64_t most) = 0;
    // How much of each stream output() has to give now, in bytes.
    struct OutputSizes {
        std::uint64_t out = 0;
        std::uint64_t err = 0;
    };
    virtual OutputSizes output_sizes(const JobRecord& job) = 0;

    // Waits, before a follower (`wait`, `serve`) asks again, until the queue may have changed
    // or `most` has passed; false when it cannot have changed. By default it waits `most` and
    // cannot tell; a store that can tell a change returns at once, and false when none came.
    virtual bool wait_for_change(std::chrono::milliseconds most)
    {
        std::this_thread::sleep_for(most);
        return true;
    }
};

} // namespace gpusched::queue
