#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/job_context.hpp>

#include <cstdint>
#include <string>

namespace gpusched {

// The types every layer speaks of a job in: the scheduler, the runner, the job log, the
// queue. Kept apart so that none of them needs another's header for them.

// 1-based position of a command in the input; jobs are known by it everywhere.
using JobId = std::uint64_t;

struct Command {
    JobId id = 0;
    std::string text;
    unsigned attempt = 1;  // 1 for the first run, 2 for the first retry, ...
    GpuSlots avoid_gpus{}; // where the previous attempt failed
    // Its input can give it again (a regular file, with --resume; a queue, to another
    // worker): a drain leaves it unstarted instead of running it.
    bool replayable = false;
    // A queued job's directory, environment and umask; none for a run's own jobs.
    SharedJobContext context;
    // Attempts run again because the job ran out of GPU memory beside other jobs: not
    // counted against its retries. From the first, it asks for at least `memory_floor` bytes
    // on each GPU (the most a GPU has: alone).
    unsigned memory_reruns{};
    std::uint64_t memory_floor{};
};

// How a job's process ended: an exit code, or the signal that killed it.
struct JobOutcome {
    int exit_code = 0;
    int signal = 0;
    // Stopped by --timeout: it did not finish, whatever it returned (a job that catches
    // SIGTERM and exits 0 too).
    bool timed_out = false;
    // What it printed says it ran out of GPU memory (says_gpu_out_of_memory).
    bool out_of_gpu_memory = false;
    bool succeeded() const { return signal == 0 && exit_code == 0 && !timed_out; }
};

// The exit code recorded for a job whose shell could not be started, as the shell itself
// reports a command it cannot find.
inline constexpr int k_exit_spawn_failed = 127;

} // namespace gpusched
