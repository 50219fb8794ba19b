#pragma once

#include <gpusched/gpu_usage.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/resume_state.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/host_leases.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/joblog_file.hpp>
#include <gpusched/sys/output_files.hpp>
#include <gpusched/sys/progress_line.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/sys/tagged_output.hpp>

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpusched::sys {

// What the runner does around each job, beyond starting it.
struct RunnerOptions {
    std::chrono::milliseconds kill_after{10'000};
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<OutputFiles> output_files;
    bool tag = false;
    std::optional<JoblogFile> joblog;
    std::optional<ResumeState> resume;
    std::shared_ptr<ProgressLine> progress;
    // --skip-busy: where usage is read from, what counts as busy, how often to look again.
    std::unique_ptr<UsageProbe> usage_probe;
    BusyRule busy_rule;
    std::chrono::milliseconds recheck{5'000};
    // Host-wide GPU leases; none with --no-lock.
    std::unique_ptr<HostLeases> leases;
};

// The one event loop: waits in a single poll on the input, a signalfd (signals and child
// exits), tagged output and the nearest deadline; feeds each event to the scheduler and
// carries out the actions it returns. No sleeps and no polling intervals: it wakes only
// when something happened or a deadline is due.
class JobRunner {
public:
    JobRunner(Scheduler& scheduler, CommandInput& input, SignalChannel& signals,
              const JobSpawner& spawner, const JobEnvironment& environment, RunnerOptions options);

    // Runs until the scheduler is done; returns gpusched's exit status.
    int run();

private:
    using Clock = std::chrono::steady_clock;

    struct RunningJob {
        JobId id = 0;
        unsigned attempt = 1;
        GpuSlots slots;
        std::string gpu; // its GPU ids, comma-separated as in CUDA_VISIBLE_DEVICES
        std::string command;
        Clock::time_point started;
        std::chrono::system_clock::time_point started_wall;
        bool timed_out = false;
    };

    // A per-job deadline: SIGTERM at --timeout, SIGKILL --kill-after later.
    struct JobTimer {
        JobId job = 0;
        unsigned attempt = 0;
        int signal = 0;
    };

    bool finished() const;
    void wait_for_events();
    std::optional<Clock::time_point> next_deadline() const;
    void take_input();
    void apply(std::vector<Action> actions);
    void start(StartJob& job);
    void run_once();
    void stop_run(int signal);
    void fail_to_start(const RunningJob& job, const std::string& why);
    void record_attempt(const RunningJob& job, JobOutcome outcome, AttemptEnd end);
    void retry_unwritten_records(bool last_try);
    void count_unrecorded_jobs();
    void report_unmatched_records();
    // Hands the scheduler's answer to an ended attempt on, telling the input first when the
    // job has ended for good (no retry follows).
    void after_attempt(const RunningJob& job, JobOutcome outcome, std::vector<Action> actions);
    void signal_jobs(int signal);
    void reap_children();
    void kill_adopted();
    void handle_signals();
    void fire_due_timers();
    std::optional<Clock::time_point> next_progress_draw() const;
    void redraw_progress();
    void check_busy_gpus();
    std::optional<Clock::time_point> next_busy_check() const;
    void report_unstarted();
    void report_summary();
    // Host-wide leases (job_runner_leases.cpp).
    bool take_leases(const StartJob& job, std::vector<int>& fds);
    void note_lease_holder(const RunningJob& job, pid_t pid);
    void forget_lease_holder(const RunningJob& job, pid_t pid);
    void add_lease_poll_fds(std::vector<pollfd>& fds) const;
    bool on_lease_ready(const pollfd& ready);
    void tend_leases();

    Scheduler& m_scheduler;
    CommandInput& m_input;
    SignalChannel& m_signals;
    const JobSpawner& m_spawner;
    const JobEnvironment& m_environment;
    RunnerOptions m_options;
    std::optional<TaggedOutput> m_tagged;

    JobId m_next_job = 1;
    std::size_t m_skipped = 0;
    std::unordered_map<pid_t, RunningJob> m_running;
    std::unordered_map<JobId, pid_t> m_pid_of;
    // Process groups already told to stop; their members may outlive the job's shell.
    std::set<pid_t> m_stopping_groups;
    bool m_has_children = false;
    bool m_killing = false; // the stop has come to SIGKILL
    std::optional<Clock::time_point> m_kill_deadline;
    std::multimap<Clock::time_point, JobTimer> m_job_timers;
    Clock::time_point m_started;
    Clock::duration m_busy{};
    std::size_t m_attempts = 0;
    Clock::time_point m_last_progress_draw{};
    bool m_progress_stale = false; // something changed since the line was drawn
    std::vector<std::optional<std::string>> m_busy_reasons; // per GPU, while --skip-busy skips it
    Clock::time_point m_last_busy_check{};
    std::vector<pollfd> m_poll_fds;
    std::vector<std::vector<LeaseHolder>> m_lease_holders; // per GPU, for its lease record
    std::deque<JoblogRecord> m_unwritten_records;          // the job log refused them so far
    struct Interrupted {
        JobId id = 0;
        std::string gpu;
        std::string command; // shortened
    };
    std::vector<Interrupted> m_interrupted; // attempts a stop of the run cut short
    std::set<JobId> m_interrupted_jobs;
    std::set<JobId> m_unrecorded_jobs; // a record of theirs could not be written
    std::set<JobId> m_failed_jobs;     // of those, the ones that ended failed
    bool m_unmatched_reported = false;
    bool m_run_error = false;               // an error stopped the run
    std::vector<bool> m_lease_record_stale; // per GPU
};

} // namespace gpusched::sys
