#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/placement.hpp>
#include <gpusched/halt_policy.hpp>
#include <gpusched/job.hpp>
#include <gpusched/memory_estimates.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace gpusched {

// What the scheduler asks its caller to do.
struct StartJob {
    Command command;
    GpuSlots gpus;
    AllocationId allocation = 0; // the Placement's, for what the job's processes use
    std::optional<std::uint64_t> memory{}; // promised to it on each GPU
};
struct SignalRunningJobs {
    int signal = 0;
};
// Send SIGKILL unless every job has ended before the grace period is over.
struct ArmKillTimer {};
// A failed job goes back to the front of the queue for another attempt.
struct RetryScheduled {
    JobId job = 0;
    unsigned attempt = 0;
    // Run again because it ran out of GPU memory beside other jobs (not counted as a retry),
    // asking for at least `memory` bytes on each GPU; `alone`: with each GPU to itself.
    bool out_of_memory = false;
    std::uint64_t memory = 0;
    bool alone = false;
};
// How many times a job that ran out of GPU memory beside other jobs is run again (first
// asking for more, then alone) before such an end counts as its own failure.
constexpr unsigned k_most_memory_reruns = 2;

// The --halt condition was reached: no job starts from now on (and, for `now`, the running
// ones are being stopped).
struct HaltStarted {
    HaltPolicy::When when = HaltPolicy::When::soon;
};

// A command taken only because it could start at once (a queue worker's) cannot start after
// all (its GPU's lease is held by another process), or asks for more GPUs than the pool has:
// it goes back to its input, for another worker, and is no longer this scheduler's.
struct ReturnCommand {
    Command command;
};

using Action = std::variant<StartJob, SignalRunningJobs, ArmKillTimer, RetryScheduled, HaltStarted,
                            ReturnCommand>;

struct JobCounts {
    std::size_t succeeded = 0;
    std::size_t failed = 0; // after their last attempt
    // Stopped by `gpusched cancel` while running: neither succeeded nor failed, whatever they
    // returned, as the queue records them.
    std::size_t cancelled = 0;
    // Running when the run was stopped (a signal to gpusched, `--halt now`): not counted as
    // succeeded or failed, whatever they returned, and run again by --resume.
    std::size_t interrupted = 0;
    std::size_t retries = 0; // attempts beyond the first
    // Attempts run again because they ran out of GPU memory beside other jobs (not retries).
    std::size_t memory_reruns = 0;
    // Jobs whose record (job log, .info file) could not be written: the exit status counts
    // them with the failures, as their outcome is not on record.
    std::size_t unrecorded = 0;
};

struct SchedulerOptions {
    // Commands held while every GPU is busy, so memory stays flat whatever the input length.
    std::size_t read_ahead = 64;
    // Further attempts for a failed job (a queued job may ask for its own).
    unsigned retries = 0;
    // Distinct GPUs each job gets (a queued job may ask for its own). Jobs start in input
    // order: one waiting for its GPUs is never overtaken by a later one.
    std::size_t gpus_per_job = 1;
    // GPU memory each job needs on each of its GPUs (--mem; a queued job may ask for its
    // own): nothing, each GPU whole (or its --jobs-per-gpu slot).
    std::optional<std::uint64_t> memory{};
    HaltPolicy halt;
    // Take a command only when it can start at once (a queue worker: what it takes, no other
    // worker can run, so it takes nothing it cannot start). read_ahead is then ignored.
    bool only_when_free = false;
};

// The scheduler's state machine. It takes events (a command arrived, the input ended, a job
// ended, a signal came, a timer fired) and returns the actions they call for. It performs no
// I/O, so every rule can be tested without processes. Where each job goes is its Placement's
// answer: the scheduler keeps the order, the retries, the stops and the halts.
class Scheduler {
public:
    Scheduler(Placement placement, SchedulerOptions options);
    // A placement of `pool` alone: no leases, no samples.
    Scheduler(GpuPool pool, SchedulerOptions options);

    // True while the caller should read more input.
    bool wants_input() const;
    // How many commands it would take now, one after another (0 when !wants_input()).
    std::size_t commands_wanted() const;

    std::vector<Action> on_command(Command command);
    // A command that cannot run (it holds a NUL byte): it counts as failed.
    void on_rejected_command();
    std::vector<Action> on_input_end();
    // A job's shell ended. With `gpus_held`, what it left behind (a background process)
    // still holds its GPUs: they get no other job until on_job_released.
    std::vector<Action> on_job_exit(JobId job, JobOutcome outcome, bool gpus_held = false);
    // Nothing of an ended job attempt holds its GPUs any more.
    std::vector<Action> on_job_released(JobId job, unsigned attempt);
    std::vector<Action> on_spawn_failure(JobId job);
    // The system cannot start a process for now (a fork limit): the job goes back to the
    // front of the queue, not counted as an attempt, and no job starts until on_spawn_retry.
    void on_spawn_deferred(JobId job);
    std::vector<Action> on_spawn_retry();
    bool spawn_deferred() const { return m_spawn_deferred; }
    // A job's record could not be written, for good.
    void on_record_lost() { ++m_counts.unrecorded; }
    // SIGINT, SIGTERM, SIGHUP: start nothing more, pass the signal on (and arm the kill
    // deadline), SIGKILL on the second one. SIGUSR1 (drain): the caller reads no more
    // input, but hands on the commands already written to it; those that cannot be read
    // again still run, the replayable ones do not, and the run ends with the input.
    std::vector<Action> on_signal(int signal);
    // --skip-busy found a GPU busy with someone else's work, or free again.
    std::vector<Action> on_gpu_usable(GpuSlot gpu, bool usable);
    // The queue a worker serves paused a GPU (no new job starts there) or resumed it.
    std::vector<Action> on_gpu_paused(GpuSlot gpu, bool paused);
    // A look read the GPUs' memory (Placement::take_sample_changes): a job waiting for memory
    // may fit now.
    std::vector<Action> on_memory_read();
    // The job at the head of the queue asks for memory and waits for it.
    bool memory_job_waits() const;
    // An earlier run's job of `command` was seen to use `peak` bytes on a GPU (its job log
    // says so): --mem auto estimates the jobs of its kind from it, as from this run's own.
    void learn_memory_peak(std::string_view command, std::uint64_t peak)
    {
        m_estimates.learn(command, peak);
    }
    // A running job is to be stopped for good (`gpusched cancel`): however it ends, it is
    // not tried again, and it counts as cancelled (even when a stop of the run follows).
    void on_job_cancelled(JobId job);
    // A started job could not take the host-wide lease of `refused` (another process holds
    // it): the job goes back to the front of the queue, not counted as an attempt, and
    // those GPUs get no job until on_lease_available.
    std::vector<Action> on_lease_refused(JobId job, const GpuSlots& refused);
    // The lease of a GPU is ours, or may be taken again.
    std::vector<Action> on_lease_available(GpuSlot gpu);
    // True while a GPU, once free, would get a job: jobs are queued or more may come.
    bool wants_gpus() const;

    // True when the scheduler has nothing left to wait for and the caller should exit.
    bool done() const;
    int exit_status() const;

    // Commands accepted from the input that will never start (after a stop, drain or halt),
    // in input order.
    std::vector<Command> take_unstarted();

    const GpuPool& pool() const { return m_placement.pool(); }
    // The runner tells it what the system said: leases, samples, jobs started and ended.
    Placement& placement() { return m_placement; }
    const Placement& placement() const { return m_placement; }
    std::size_t running_count() const { return m_running.size(); }
    // Ended jobs whose leftovers still hold their GPUs.
    std::size_t lingering_count() const { return m_lingering.size(); }
    std::size_t queued_count() const { return m_queue.size(); }
    const JobCounts& counts() const { return m_counts; }
    bool stopping() const { return m_phase == Phase::stopping; }
    // True once the run stops its running jobs (a signal, `--halt now`): a job that ends from
    // now on was interrupted.
    bool interrupting() const
    {
        return m_phase == Phase::stopping || m_phase == Phase::halting_now;
    }

private:
    enum class Phase { running, draining, halting_soon, halting_now, stopping };

    struct Running {
        Allocation allocation;
        Command command;
        bool cancelled = false;
        // Once taken: the most it was seen to use on a GPU, and whether it shared one.
        std::uint64_t peak = 0;
        bool shared = false;
    };

    // True while queued commands may still start: running, or draining after SIGUSR1.
    bool starts_jobs() const { return m_phase == Phase::running || m_phase == Phase::draining; }
    // Removes a running job and gives its GPUs back to the pool.
    Running take_running(JobId job, const char* event, bool release_gpus = true);
    // Jobs whose shell runs, or whose leftovers hold their GPUs.
    bool has_processes() const { return !m_running.empty() || !m_lingering.empty(); }
    std::vector<Action> start_what_fits();
    // What a command asks for itself, else the options'.
    GpuNeed need_of(const Command& command) const;
    GpuNeed default_need() const { return {m_options.gpus_per_job, m_options.memory}; }
    unsigned retries_of(const Command& command) const;
    void check_halt(std::vector<Action>& actions);

    // An attempt's peak, once its shell ended, to the estimates of --mem auto.
    void learn_memory(const Command& command, const Allocation& allocation);

    Placement m_placement;
    SchedulerOptions m_options;
    MemoryEstimates m_estimates;
    std::deque<Command> m_queue;
    std::vector<Command> m_left_by_drain; // replayable commands a drain does not start
    std::unordered_map<JobId, Running> m_running;
    // Ended attempts whose GPUs leftovers still hold, by job and attempt: a retry may end the
    // same way while the first attempt's leftovers run.
    std::map<std::pair<JobId, unsigned>, Allocation> m_lingering;
    JobCounts m_counts;
    Phase m_phase = Phase::running;
    int m_stop_signal = 0;
    bool m_input_ended = false;
    bool m_spawn_deferred = false;
    std::size_t m_deferred_in_a_row = 0;
};

} // namespace gpusched
