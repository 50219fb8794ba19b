#pragma once

#include <gpusched/queue/job_record.hpp>
#include <gpusched/queue/redis/redis_client.hpp>
#include <gpusched/queue/redis/redis_command.hpp>
#include <gpusched/result.hpp>

#include <chrono>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::queue {

// A job as the queue keeps it (the hash job:ID).
struct QueuedJob {
    std::string id;
    std::map<std::string, std::string> fields; // command, batch, seq, sig, outcome, ...
    const std::string& field(const std::string& name) const;
};

// A job's result as a worker sends it to Redis: the result, and what the queue files it
// under (the host that ran it, the job's batch, the queue's marker when it was taken).
struct OwedResult {
    JobResult result;
    std::string host;
    std::string batch;
    std::string marker;
};

// The reply of the scripts that change one taken job (start, finish, give_back).
enum class TakenJobReply {
    applied,      // 1
    not_this_workers, // 0: no longer in the worker's list, or ended already
    no_such_job,  // -1 (finish): the job's record is gone
    queue_reset,  // -2: the queue's marker changed since the job was taken
};
std::optional<TakenJobReply> read_taken_job_reply(const RedisReply& reply);

// A job a worker took, read with the queue's marker: `ours` is false when the job is no
// longer in the worker's list (returned to the queue, or the queue was reset meanwhile).
struct FetchedTakenJob {
    std::string marker;
    bool ours = false;
    QueuedJob job;
    std::string context; // the job's context (encode_context), "" when it names none
    bool paused = false; // the whole queue is paused: the job went back to the queue's head
    // The GPUs paused as the job was read, when it is ours.
    std::optional<std::set<std::string>> paused_gpus;
};

// What a worker is asked (`gpusched cancel`, `pause`), read at each look: the jobs of its
// own to stop, and the paused GPUs ("" when the whole queue is paused).
struct WorkerRequests {
    std::vector<std::string> cancel;
    std::set<std::string> paused;
    std::string stop; // "drain", "now", or "" when not asked
};

// What a heartbeat learns: the queue's marker (to tell a reset), the workers whose leases
// have run out, whose jobs go back to the queue, and when the next lease of another worker
// runs out (each worker's own lease governs its jobs: the next heartbeat comes then).
struct HeartbeatReply {
    std::string marker;
    std::vector<std::string> expired;
    std::optional<std::chrono::milliseconds> next_expiry;
};

// The Redis side of the queue NAME: its keys, its scripts, and the commands that read and
// change it. The protocol (every key, every job state, every script) is described in
// docs/queue-protocol.md; keep the two in step. Every key shares the hash tag {NAME}, and
// every key a script touches is passed in KEYS, so Redis Cluster can serve a queue.
//
// The worker's operations are commands to send (the worker sends them without waiting, from
// its event loop) and readers of their replies; the command-line tools use the synchronous
// forms at the end.
class RedisQueue {
public:
    explicit RedisQueue(std::string name);

    const std::string& name() const { return m_name; }
    // Every script of the protocol, for connections to load once.
    static std::vector<const LuaScript*> scripts();

    // The worker's commands.
    RedisCommand open_marker(const std::string& made) const; // reply: the marker
    RedisCommand take(const std::string& worker) const; // BLMOVE pending -> taken:WORKER
    RedisCommand fetch(const std::string& id) const;    // reply: the job's fields
    // A job of the worker's list and the queue's marker, read together; with the job's
    // context unless it is `known_context` (a digest the worker has read).
    RedisCommand fetch_taken(const std::string& worker, const std::string& id,
                             const std::string& known_context = "") const;
    static std::optional<FetchedTakenJob> read_taken(const std::string& id, const RedisReply& reply);
    // The commands on one taken job name the queue's marker the job was taken under: after a
    // reset they change nothing and reply -2.
    // Notes the job started (reply 1), or 0 when it is no longer this worker's to run.
    RedisCommand start(const std::string& worker, const std::string& id, const std::string& host,
                       const std::string& gpu, double started, const std::string& marker) const;
    // Records a job's result once (a late duplicate changes nothing) and drops it from the
    // taken list of `worker`.
    RedisCommand finish(const std::string& worker, const OwedResult& owed) const;
    // Puts a taken job the worker cannot run behind the queued jobs of its priority.
    RedisCommand pass_by(const std::string& worker, const std::string& id,
                         const std::string& marker) const;
    // Puts a job `worker` took back at the head of the queue.
    RedisCommand give_back(const std::string& worker, const std::string& id,
                           const std::string& marker) const;
    // Notes the worker alive until `lease_ms` from now (its own lease, which governs its
    // jobs); replies with the marker and the workers whose leases ran out.
    RedisCommand heartbeat(const std::string& worker, const std::string& description,
                           long long lease_ms, const std::string& user) const;
    static std::optional<HeartbeatReply> read_heartbeat(const RedisReply& reply);
    // Returns every job of `worker` to the head of the queue and forgets the worker; the
    // reply is how many went back. For a worker whose lease ran out, and for one leaving.
    RedisCommand reclaim(const std::string& worker) const;
    RedisCommand taken(const std::string& worker) const; // reply: the ids
    // The cancels of the worker's jobs (taken from its set) and the paused GPUs.
    RedisCommand requests(const std::string& worker) const;
    static std::optional<WorkerRequests> read_requests(const RedisReply& reply);

    // Synchronous forms for the command-line tools. Each returns the failure that kept Redis
    // from answering (RedisClient says of which kind), or why the queue would not do it.
    // The queue's marker: a random word set once, when the queue is first used (SET NX),
    // and read back. A queue whose marker is gone or has changed was reset (FLUSHALL, a
    // Redis restarted without its data): what it held is lost. open() makes it if need be
    // and returns it; marker() reads it ("" when there is none).
    Result<std::string> open(RedisClient& redis) const;
    Result<std::string> marker(RedisClient& redis) const;
    // The last job id given out (0 when none was).
    Result<long long> last_id(RedisClient& redis) const;
    // Submitting: ids for `count` jobs (the last of them), a batch number, then the jobs.
    Result<long long> reserve_ids(RedisClient& redis, long long count) const;
    Result<long long> new_batch(RedisClient& redis) const;
    struct NewJob {
        std::string id, command, seq, signature;
        std::string context;   // the digest of its context, stored by store_context
        std::string user, host; // who submitted it, from where
        std::string directory;  // where it runs, for listings
        std::string name{};     // its label, "" for none
        // What it waits for: ids, each followed by '!' where its success is needed.
        std::string after{};
        std::string uid{}; // the submitter's, on the host it submitted from
        std::string memory{}; // its --mem, for listings (memory_asked_field); "" for none
    };
    // Keeps a submission's context (encode_context) under its digest, for its jobs to name:
    // one copy of an environment for every job submitted with it.
    Result<void> store_context(RedisClient& redis, const std::string& digest,
                               const std::string& encoded) const;
    // Idempotent: a job already submitted under its id is not queued again. The jobs go
    // before those of a lower priority, and with `front` before those of their own.
    Result<void> submit(RedisClient& redis, const std::string& batch,
                        const std::vector<NewJob>& jobs, long long priority = 0,
                        bool front = false) const;
    // The ids of batch `batch` that ended since the last call, waiting up to `timeout_s`.
    Result<std::vector<std::string>> wait_ended(RedisClient& redis, const std::string& batch,
                                                double timeout_s) const;
    // Every id of batch `batch` wait_ended has returned so far (or lost with a connection).
    Result<std::vector<std::string>> ended_ids(RedisClient& redis, const std::string& batch) const;
    // The job's fields, none when it has no record.
    Result<QueuedJob> fetch(RedisClient& redis, const std::string& id) const;
    // For a submitter that waits: the workers whose leases ran out (they are gone, and hold
    // jobs no one else will run until someone reclaims them), reclaiming one at once (how
    // many jobs went back), and how many workers the queue has.
    Result<std::vector<std::string>> expired_workers(RedisClient& redis) const;
    Result<long long> reclaim_now(RedisClient& redis, const std::string& worker) const;
    Result<long long> worker_count(RedisClient& redis) const;

    // The queue commands' operations (redis_queue_verbs.cpp).
    struct Snapshot {
        long long pending = 0;
        std::vector<QueuedJob> first_pending;
        struct Worker {
            std::string id;
            std::map<std::string, std::string> fields; // about, since, ...
            std::vector<std::string> taken;
        };
        std::vector<Worker> workers;
        std::vector<QueuedJob> taken_jobs; // of every worker, in the workers' order
        std::vector<QueuedJob> recent;     // ended, latest first
        long long waiting = 0;             // for other jobs to end
        std::vector<QueuedJob> first_waiting;
        std::set<std::string> paused;
        std::map<std::string, std::string> stats;
    };
    // `pending_shown` pending jobs from position `pending_from` on.
    Result<Snapshot> snapshot(RedisClient& redis, std::size_t pending_shown,
                              std::size_t recent_shown, std::size_t pending_from) const;
    // The jobs asked for that exist, and which of them are pending.
    struct Found {
        std::vector<QueuedJob> jobs;
        std::set<std::string> pending;
    };
    Result<Found> jobs(RedisClient& redis, const std::vector<std::string>& ids) const;
    Result<std::vector<std::string>> unended(RedisClient& redis) const;
    // The jobs asked for that exist, with only `fields` of each: for a look at many jobs (a
    // shell's completion) that needs neither their environment nor the tails of their output.
    Result<std::vector<QueuedJob>> job_fields(RedisClient& redis,
                                              const std::vector<std::string>& ids,
                                              const std::vector<std::string>& fields) const;
    // The ids of the jobs the workers have taken: running, or about to start.
    Result<std::set<std::string>> taken_ids(RedisClient& redis) const;
    // The queue's workers: id, host, pid, GPUs, since when, user.
    Result<std::vector<WorkerRecord>> workers(RedisClient& redis) const;
    // A worker as its id (HOST:PID:RANDOM) and its hash (worker:W) tell it.
    static WorkerRecord worker_record(const std::string& id,
                                      const std::map<std::string, std::string>& fields);
    // Asks `worker` to stop (`now`, or once its running jobs end): false when the queue has no
    // such worker.
    Result<bool> ask_to_stop(RedisClient& redis, const std::string& worker, bool now) const;
    // The ids of the jobs submitted with label `name` (removed ones too: look them up).
    Result<std::vector<std::string>> named(RedisClient& redis, const std::string& name) const;
    enum class Cancelled { removed, stopping, already_ended, unknown };
    Result<Cancelled> cancel(RedisClient& redis, const std::string& id) const;
    // Queues an ended job again, its next attempt signed with `signing_key`. Refused, in
    // words for the user: `not_found` (no such job), `bad_request` (not ended, succeeded, or
    // it would be skipped again), `refused` (signed, and no key given or the record no longer
    // matches its signature), `other` (it changed meanwhile: try again).
    Result<void> retry(RedisClient& redis, const std::string& id,
                       const std::optional<std::string>& signing_key) const;
    Result<void> pause(RedisClient& redis, const std::string& gpu) const;
    Result<void> resume(RedisClient& redis, const std::string& gpu) const;
    Result<long long> purge(RedisClient& redis, std::optional<double> ended_before) const;

    static QueuedJob to_job(const std::string& id, const RedisReply& reply);
    static std::vector<std::string> to_strings(const RedisReply& reply);

private:
    static std::vector<const LuaScript*> verb_scripts();
    std::string key(const std::string& suffix) const { return m_prefix + suffix; }

    std::string m_name;
    std::string m_prefix;
};

// A queue name may hold letters, digits, '-', '_' and '.'; anything else is a bad_request.
Result<void> check_queue_name(const std::string& name);

} // namespace gpusched::queue
