#pragma once

#include <gpusched/gpu_pool.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace gpusched {

// 1-based position of a command in the input; jobs are known by it everywhere.
using JobId = std::uint64_t;

struct Command {
    JobId id = 0;
    std::string text;
};

// How a job's process ended: an exit code, or the signal that killed it.
struct JobOutcome {
    int exit_code = 0;
    int signal = 0;
    bool succeeded() const { return signal == 0 && exit_code == 0; }
};

// What the scheduler asks its caller to do.
struct StartJob {
    Command command;
    GpuSlot gpu = 0;
};
struct SignalRunningJobs {
    int signal = 0;
};
// Send SIGKILL (on_kill_timer) unless every job has ended before the grace period is over.
struct ArmKillTimer {};

using Action = std::variant<StartJob, SignalRunningJobs, ArmKillTimer>;

struct JobCounts {
    std::size_t succeeded = 0;
    std::size_t failed = 0;
};

// The scheduler's state machine. It takes events (a command arrived, the input ended, a job
// ended, a signal came, a timer fired) and returns the actions they call for. It performs no
// I/O, so every rule can be tested without processes.
class Scheduler {
public:
    // read_ahead bounds the commands held while every GPU is busy, so memory stays flat
    // however long the input is.
    Scheduler(GpuPool pool, std::size_t read_ahead);

    // True while the caller should read more input.
    bool wants_input() const;

    std::vector<Action> on_command(Command command);
    // A command that cannot run (it holds a NUL byte): it counts as failed.
    void on_rejected_command();
    std::vector<Action> on_input_end();
    std::vector<Action> on_job_exit(JobId job, JobOutcome outcome);
    std::vector<Action> on_spawn_failure(JobId job);
    // SIGINT, SIGTERM, SIGHUP: start nothing more, pass the signal on, SIGKILL on the
    // second one or when the kill timer fires. SIGUSR1: stop reading, let running jobs end.
    std::vector<Action> on_signal(int signal);
    std::vector<Action> on_kill_timer();

    // True when the scheduler has nothing left to wait for and the caller should exit.
    bool done() const;
    int exit_status() const;

    // Commands accepted from the input that will never start (after a stop or a drain).
    std::vector<Command> take_unstarted();

    const GpuPool& pool() const { return m_pool; }
    std::size_t running_count() const { return m_running.size(); }
    std::size_t queued_count() const { return m_queue.size(); }
    const JobCounts& counts() const { return m_counts; }
    bool stopping() const { return m_phase == Phase::stopping; }

private:
    enum class Phase { running, draining, stopping };

    std::vector<Action> start_what_fits();
    std::vector<Action> finish_job(JobId job, bool succeeded);

    GpuPool m_pool;
    std::size_t m_read_ahead;
    std::deque<Command> m_queue;
    std::unordered_map<JobId, GpuSlot> m_running;
    JobCounts m_counts;
    Phase m_phase = Phase::running;
    int m_stop_signal = 0;
    bool m_input_ended = false;
};

} // namespace gpusched
