#pragma once

#include <gpusched/job_context.hpp>
#include <gpusched/queue/job_record.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusched::queue {

// A command to queue: its text and its number among the commands of the submission (the
// number a submitter names it by).
struct CommandToQueue {
    std::string command;
    std::uint64_t number = 0;
};

// A job of a submission that ended, as its submitter reports it.
struct EndedJob {
    JobRecord record;
    std::uint64_t number = 0; // among the submission's commands, where the store keeps it
    std::string host;         // that ran it, where the store records it (Redis)
};

// The store could not be reached within the submission's connect timeout. Nothing is known
// to be wrong with the queue itself: the same submission may work later (exit status 75).
class QueueUnreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The store answered, and will not let this user in (a password missing or wrong): trying
// again would get the same answer, so nothing does; the command ends as on any error of the
// queue.
class QueueRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A worker for a queue that none serves, for whoever submits to start (the command line
// starts its own binary): `gpusched worker` with `arguments` names the queue.
struct WorkerToStart {
    std::string queue;
    std::vector<std::string> arguments;
    // A directory beside the queue, for the worker's log where the user has no state
    // directory.
    std::filesystem::path beside;
    // True once the worker serves the queue.
    std::function<bool()> serving;
};

struct SubmissionSettings {
    std::string queue;
    // Where, with what and as whom every job of the submission runs: the submitter's.
    JobContext context;
    // The GPUs the submitter's environment names (GPUSCHED_GPUS, CUDA_VISIBLE_DEVICES), for
    // the hint when no worker serves those: the context may not carry the environment.
    std::optional<std::string> gpus_named;
    Submitter submitter;
    std::string name; // the label its jobs go by, "" for none
    // The jobs its jobs wait for (--after, --after-ok): each a job of the queue.
    std::vector<JobDependency> after;
    std::int64_t priority = 0;
    bool front = false;             // ahead of the queued jobs of their priority
    std::optional<std::string> key; // signs each job (a Redis queue's workers may ask for it)
    std::chrono::milliseconds connect_timeout{10'000}; // to reach a server, and reach it again
    // Starts a worker when the first jobs are queued and none serves the queue (where the
    // store can tell: a local queue); none: the submission says the jobs wait for one.
    std::function<void(const WorkerToStart&)> start_worker;
};

// One `gpusched submit`: commands go into a queue as one batch, chunk by chunk as they are
// read, and can be followed to their end. Made by the store that keeps the queue
// (open_sqlite_submission, open_redis_submission); the submitter does not know which.
// A failure says what was submitted before it: a chunk is queued whole or not at all.
class Submission {
public:
    virtual ~Submission() = default;

    // How many commands go in one chunk (one transaction, or one round trip).
    virtual std::size_t chunk_size() const = 0;
    // Queues a chunk.
    virtual void add(const std::vector<CommandToQueue>& commands) = 0;
    // Everything is queued: says how much, and where.
    virtual void close() = 0;
    // How many jobs were queued, and their ids in the order queued.
    virtual std::size_t size() const = 0;
    virtual std::vector<std::int64_t> ids() const = 0;
    // Follows the jobs to their end, calling `report` for each as it ends (true when it
    // succeeded); how many did not succeed. A job lost on the way (removed, or the queue
    // reset) is thrown, naming it.
    virtual std::size_t wait(const std::function<bool(const EndedJob&)>& report) = 0;
};

} // namespace gpusched::queue
