#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::queue {

// A job's state in a queue. A job is queued (or waiting, while a job it was submitted --after
// has not ended), then running (taken by one worker), then ended one way: succeeded, failed,
// cancelled, refused (the worker would not run it), or skipped (a job it was submitted
// --after-ok did not succeed: it never ran).
enum class JobState { queued, running, succeeded, failed, cancelled, refused, waiting, skipped };

std::string_view to_string(JobState state);
// True for the states a job ends in: not queued, waiting or running.
constexpr bool has_ended(JobState state)
{
    return state != JobState::queued && state != JobState::running && state != JobState::waiting;
}

// The state named `name` (as to_string writes it); nothing for any other word.
std::optional<JobState> job_state_named(std::string_view name);
// How a job ended that has no exit status to tell (cancelled, refused, skipped), as one
// phrase: its note where the note names the state itself ("cancelled before it started",
// "skipped: job 11 failed"), else the state and the note ("refused: its directory is
// missing"), or the state alone.
std::string describe_end(JobState state, std::string_view note);

// A job's GPU memory peak as a store keeps it (decimal bytes): 0 for none, and for what no
// worker writes (a hand-edited record: not a number, 0, more than k_most_job_memory).
std::uint64_t peak_memory_of(std::string_view text);
// A job's --mem as the Redis store lists it (a job's `mem` field): decimal bytes, or `auto`;
// "" where it asked none. What no submitter writes is read as none.
std::string memory_asked_field(std::optional<std::uint64_t> memory);
std::optional<std::uint64_t> memory_asked_of(std::string_view text);
// A job's memory re-runs as a store keeps them (a decimal count); 0 for what no worker writes.
unsigned memory_reruns_of(std::string_view text);

// How a job ended, as a worker records it in either store: the one result of the queue.
struct JobResult {
    std::int64_t id = 0;
    JobState state = JobState::succeeded; // an ended state
    int exit_code = 0;
    int signal = 0;
    std::string gpu;      // the GPUs it ran on ("" when it never started)
    double started = 0;   // seconds since the epoch (0 when it never started)
    double runtime = 0;   // seconds
    std::string note;     // why it was refused or cancelled
    // The end of what it wrote (the last 64 KiB of each stream), where the store keeps its
    // jobs' output itself (Redis); `complete` when that is all of it.
    std::string out_tail{};
    std::string err_tail{};
    bool complete = true;
    // The most GPU memory it was seen to use on one GPU, in bytes (0: not watched, --mem).
    std::uint64_t peak_memory = 0;
    // Attempts its worker ran again after they ran out of GPU memory beside other jobs.
    unsigned memory_reruns = 0;
};

// A job a submission's jobs wait for: its end (--after), or its success (--after-ok: if it
// ends otherwise, they are skipped).
struct JobDependency {
    std::int64_t id = 0;
    bool ok = false;
    bool operator==(const JobDependency&) const = default;
};

// Who submitted a job: the account, by number where the store can tell one (a local queue: -1
// on Redis, whose hosts may number their accounts apart), by name, and from which host.
struct Submitter {
    std::int64_t uid = -1;
    std::string user;
    std::string host;
    // "ann", or "ann@host" where the host is known; "" for a job queued before gpusched
    // recorded who submitted it.
    std::string describe() const { return host.empty() ? user : user + "@" + host; }
};

struct JobRecord {
    std::int64_t id = 0;
    std::string queue;
    std::string command;
    std::int64_t batch = 0;
    std::int64_t priority = 0;
    JobState state = JobState::queued;
    std::string worker;        // while running, and the one that ran it
    std::string gpu;           // the GPUs it ran on
    double submitted = 0;      // seconds since the epoch
    double started = 0;        // 0 until started
    double ended = 0;          // 0 until ended
    double runtime = 0;        // seconds, once ended
    int exit_code = 0;
    int signal = 0;
    std::string note;          // why it was refused or cancelled
    // Times it went back to the queue unfinished, where the store counts them per job (the
    // local one; Redis counts them for the whole queue only).
    std::optional<std::int64_t> returned;
    bool cancel_requested = false;
    std::string output;        // the directory its output files are in, once taken (local)
    std::string directory;     // where it runs: its submitter's ("" when not recorded)
    Submitter submitter;
    std::string name;                 // its label (submit --name), "" when none
    std::vector<JobDependency> after; // what it waits for, where listed (a waiting job)
    std::uint64_t peak_memory = 0;    // once ended, as its result said (0: not watched)
    unsigned memory_reruns = 0;       // once ended, as its result said
    // The GPU memory it asked for on each of its GPUs (submit --mem), in bytes;
    // k_learned_memory for `--mem auto`; nothing where it asked none (its worker's default).
    std::optional<std::uint64_t> memory_asked{};
    bool ended_state() const { return has_ended(state); }
};

struct WorkerRecord {
    std::string id;
    std::string host;
    std::int64_t pid = 0;
    std::string gpus;
    double since = 0;
    std::string user{}; // whose it is ("" where not recorded)
};

struct QueueListing {
    std::int64_t queued = 0;
    std::vector<JobRecord> first_queued; // in the order they will run
    std::int64_t waiting = 0;            // jobs waiting for others to end
    std::vector<JobRecord> first_waiting;
    std::vector<JobRecord> running;
    std::vector<JobRecord> recent;       // ended, latest first
    std::vector<WorkerRecord> workers;
    std::set<std::string> paused;       // GPUs paused; "" when the whole queue is
    std::int64_t succeeded = 0, failed = 0, cancelled = 0, refused = 0, skipped = 0;
    // Times a job went back to the queue unfinished (its worker stopped or was lost), where
    // the backend counts them (Redis).
    std::optional<std::int64_t> returned;
};

// What cancel() did to one job: removed from the queue, asked to stop (it was running), or
// nothing (it had ended, or no such job).
enum class CancelOutcome { removed, stopping, already_ended, unknown };

} // namespace gpusched::queue
