#pragma once

#include <gpusched/gpu_memory.hpp>
#include <gpusched/job.hpp>
#include <gpusched/process_table.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// The one record of a started job, from its start until nothing of it runs any more.
struct RunningJob {
    using Clock = std::chrono::steady_clock;

    JobId id = 0;
    unsigned attempt = 1;
    // Attempts before this one run again after running out of GPU memory beside other jobs.
    unsigned memory_reruns = 0;
    GpuSlots slots;
    AllocationId allocation = 0; // its Placement's, whose memory its processes use
    std::optional<std::uint64_t> memory; // promised to it on each GPU (--mem), in bytes
    std::string gpu; // its GPU ids, comma-separated as in CUDA_VISIBLE_DEVICES
    std::string command;
    bool replayable = false; // its input can give it again (see Command)
    Clock::time_point started;
    std::chrono::system_clock::time_point started_wall;
    ProcessId leader = 0; // its shell, leader of its process group
    double gpus_held = 0; // what the fair share counts it for (Placement::gpus_held), once started
    int token = -1;       // its presence token (see Spawned)

    std::optional<JobOutcome> outcome; // once its shell is reaped
    // The most GPU memory its processes were seen to use on one GPU (0: not watched), read
    // as its shell ended, before its allocation goes back.
    std::uint64_t peak_memory = 0;
    bool token_closed = false;         // no process holds its token any more
    // Its process group was seen empty after its shell ended: from then on the id may be
    // anybody's, and it is never searched or signalled again.
    bool group_gone = false;
    bool timed_out = false;
    bool cancelled = false; // stopped by `gpusched cancel`
    // Its shell has ended but not what it left: named in the log if still there at this time.
    std::optional<Clock::time_point> report_at;
    // --timeout: SIGTERM at the first deadline, SIGKILL --kill-after later; then what it
    // leaves behind is killed as it is found.
    std::optional<Clock::time_point> terminate_at;
    // Its own --timeout, where it asked for one (a queued job), over the run's.
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<Clock::time_point> kill_at;
    bool killing = false;

    bool shell_running() const { return !outcome.has_value(); }
    // The group to look for its processes in, or 0.
    ProcessId group() const { return group_gone ? 0 : leader; }
};

// The running jobs and the rules for stopping them, over a ProcessTable:
// - a stop passes its signal to each job's process group (only while its leader is unreaped:
//   the id of a reaped leader may be anybody's), to every process that still holds the job's
//   token or is in its group (what left the group with setsid), and to our other children;
// - at the kill deadline all of those get SIGKILL, and from then on whatever comes back to
//   us or is found holding a token is killed at once, so no chain of setsid processes
//   outlasts the stop;
// - --timeout applies the same two steps to one job, leftovers included.
class RunningJobs {
public:
    using Clock = std::chrono::steady_clock;

    RunningJobs(ProcessTable& processes, std::chrono::milliseconds kill_after,
                std::optional<std::chrono::milliseconds> timeout);

    // Takes a started job in, arming its --timeout from its start.
    RunningJob& add(RunningJob job);
    RunningJob* find_leader(ProcessId pid);
    // A job attempt is known by its token: attempts of one job may overlap (a retry starts
    // while what the failed one left still runs).
    RunningJob* find_token(int token);
    // Takes a job that is gone out of the table, giving its token back.
    RunningJob take(int token);
    // Marks an ended job whose leftovers still run; they are named at the returned time if
    // they are still there (most end at once, and naming them costs a look at every process).
    void linger(RunningJob& job, Clock::time_point now);

    bool empty() const { return m_jobs.empty(); }
    std::size_t size() const { return m_jobs.size(); }
    std::vector<RunningJob>& jobs() { return m_jobs; }
    const std::vector<RunningJob>& jobs() const { return m_jobs; }

    // What is left of a job whose shell has ended.
    std::vector<ProcessInfo> leftovers(const RunningJob& job);

    // Sends `signal` to every job and all it left, and to our other children. SIGKILL
    // starts the killing: see after_reap.
    void signal_all(int signal, Clock::time_point now);
    // SIGKILL at now + kill_after, unless everything has ended by then.
    void arm_kill_deadline(Clock::time_point now);
    bool killing() const { return m_killing; }
    // Called after children were reaped: once a stop or a timeout has come to SIGKILL, what
    // came back to us (orphans of the dead) is killed as it appears.
    void after_reap(Clock::time_point now);

    // Stops one job as --timeout would (SIGTERM to it and what it left, SIGKILL --kill-after
    // later), for `gpusched cancel`.
    void cancel(RunningJob& job, Clock::time_point now);

    // gpusched and its jobs were stopped (Ctrl-Z) for `stopped`: that time is not the jobs'.
    // Their start moves on by it, so their run time leaves it out, and so does every
    // deadline: --timeout, the kill deadline, leftovers to name.
    void postpone(Clock::duration stopped);

    std::optional<Clock::time_point> next_deadline() const;
    // By token: jobs that passed --timeout at this call (their SIGTERM just went out), ended
    // jobs whose leftovers are due to be named.
    struct DueWork {
        std::vector<int> timed_out;
        std::vector<int> to_report;
        bool kill_deadline_passed = false;
    };
    DueWork fire(Clock::time_point now);

private:
    // Sends `signal`, then SIGCONT where it is to end what it reaches (see running_jobs.cpp).
    void signal_group(ProcessId leader, int signal);
    void signal_process(ProcessId pid, int signal);
    static bool ends_stopped_work(int signal);
    // Signals `jobs` and what they left; returns the processes signalled one by one.
    std::vector<ProcessId> signal_jobs(const std::vector<RunningJob*>& jobs, int signal);
    void start_sweeping(Clock::time_point now);
    void sweep(Clock::time_point now);

    ProcessTable& m_processes;
    std::chrono::milliseconds m_kill_after;
    std::optional<std::chrono::milliseconds> m_timeout;
    // Few jobs run at once (one or a few per GPU): a vector searched linearly is the cheapest.
    std::vector<RunningJob> m_jobs;
    std::optional<Clock::time_point> m_kill_deadline;
    bool m_killing = false;
    // While killing, processes may be orphaned to us without any child of ours ending (their
    // parent was not our child), so a sweep is repeated at growing intervals until all is gone.
    std::optional<Clock::time_point> m_next_sweep;
    std::chrono::milliseconds m_sweep_interval{};
};

} // namespace gpusched
