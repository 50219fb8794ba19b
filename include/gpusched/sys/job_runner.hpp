#pragma once

#include <gpusched/failed_jobs.hpp>
#include <gpusched/gpu_usage.hpp>
#include <gpusched/job_launcher.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/process_table.hpp>
#include <gpusched/resume_state.hpp>
#include <gpusched/running_jobs.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/spawn_backoff.hpp>
#include <gpusched/time_source.hpp>
#include <gpusched/sys/attempt_records.hpp>
#include <gpusched/sys/gpu_usage_watch.hpp>
#include <gpusched/sys/host_leases.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/joblog_file.hpp>
#include <gpusched/sys/output_files.hpp>
#include <gpusched/sys/progress_line.hpp>
#include <gpusched/sys/run_report.hpp>
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
    int nice = 0; // added to each job's niceness (--nice); a queued job may ask its own
    std::optional<OutputFiles> output_files;
    bool tag = false;
    std::optional<JoblogFile> joblog;
    std::optional<ResumeState> resume;
    std::shared_ptr<ProgressLine> progress;
    // The probe child that reads the GPUs' usage (a look is taken only while its answer could
    // change where a job goes); --skip-busy's rule of what counts as busy, and how often a
    // skipped GPU is looked at again; how often memory is read while a job that asks for it
    // runs or waits.
    std::optional<ProbeCommand> usage_probe;
    std::optional<BusyRule> busy_rule;
    std::chrono::milliseconds recheck{5'000};
    std::chrono::milliseconds memory_every{1'000};
    // Host-wide GPU leases; none with --no-lock.
    std::unique_ptr<HostLeases> leases;
};

// What the runner asks of the system, each behind an interface: its jobs' processes and
// their events, how a job is launched, the signals sent to gpusched, the time. A run passes
// the system's; a test of the runner's rules passes fakes, and runs an hour of them in a
// millisecond.
struct RunnerSystem {
    ProcessTable& processes;
    JobLauncher& launcher; // a LocalLauncher over `processes`, or another way to launch
    SignalSource& signals;
    const TimeSource& clock;
};

// The one event loop: waits, through the process table, on its jobs' tokens, the input, a
// signalfd (signals and child exits), tagged output and the nearest deadline; feeds each
// event to the scheduler and carries out the actions it returns. No sleeps and no polling
// intervals: it wakes only when something happened or a deadline is due.
class JobRunner {
public:
    // Its input in three roles, each its own reference: where the commands come from, what
    // the input asks of the runner (a queue's cancels and pauses), and where each job's end
    // goes. A run's files are a source alone (the other two are then the do-nothing bases);
    // a queue worker plays all three.
    JobRunner(Scheduler& scheduler, CommandSource& source, RunnerRequests& requests,
              JobEndSink& ends, RunnerSystem system, const JobEnvironment& environment,
              RunnerOptions options);

    // Gives the terminal back however the run ends, an exception included.
    ~JobRunner();
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    // Runs until the scheduler is done; returns gpusched's exit status.
    int run();

private:
    using Clock = std::chrono::steady_clock;

    bool finished() const;
    void wait_for_events();
    std::optional<Clock::time_point> next_deadline() const;
    void take_input();
    // Cancels and pauses a queue asks for (job_runner_requests.cpp).
    void take_input_requests();
    void apply(std::vector<Action> actions);
    void start(StartJob& job);
    void run_once();
    void stop_run(int signal);
    void fail_to_start(const RunningJob& job, const std::string& why);
    const JobEnvironment& environment_of(const SharedJobContext& context);
    bool waits_for_descriptors(int error) const;
    void defer_start(const RunningJob& job, const Failure& why);
    void record_attempt(const RunningJob& job, JobOutcome outcome, AttemptEnd end);
    void count_unrecorded_jobs();
    // Hands the scheduler's answer to an ended attempt on, telling the input first when the
    // job has ended for good (no retry follows).
    void after_attempt(const RunningJob& job, JobOutcome outcome, std::vector<Action> actions);
    void reap_children();
    void on_shell_exit(ProcessId leader, JobOutcome outcome);
    // A job killed by a stop signal gpusched did not send is judged a moment later
    // (k_stop_signal_grace): its end is held, and counts as interrupted if gpusched is
    // stopped meanwhile (job_runner_ends.cpp).
    bool hold_end(const RunningJob& job, JobOutcome outcome);
    void judge_held_ends();
    std::optional<Clock::time_point> next_held_end() const;
    void on_child_stopped(ProcessId pid, int signal);
    void on_token_released(int token);
    bool nothing_left_of(RunningJob& job);
    void on_leftovers_gone(int token);
    void report_leftovers(int token);
    void handle_signals();
    // Ctrl-Z (job_runner_suspend.cpp).
    void suspend();
    void on_continued();
    void fire_due_timers();
    // The looks at the GPUs' usage (--skip-busy, --mem): when the next is due, starting it,
    // and what it found.
    void check_gpu_usage();
    std::optional<Clock::time_point> next_usage_look() const;
    void tend_gpu_usage();
    GpuSamples::OwnerOf job_owners() const;
    // The commands that never started, told through the report.
    void report_unstarted();
    // Host-wide leases (job_runner_leases.cpp): what the Placement decides, carried out and
    // logged; its waits in the poll.
    std::optional<std::vector<int>> take_leases(const StartJob& job);
    void lease_holders_changed(const GpuSlots& slots);
    void add_lease_poll_fds(std::vector<pollfd>& fds) const;
    bool on_lease_ready(const pollfd& ready);
    void tend_leases();

    Scheduler& m_scheduler;
    CommandSource& m_source;
    RunnerRequests& m_requests;
    JobEndSink& m_ends;
    SignalSource& m_signals;
    ProcessTable& m_processes;
    JobLauncher& m_launcher;
    const TimeSource& m_clock;
    const JobEnvironment& m_environment;
    // The environment of the last submitted context a job started with (a queue's).
    SharedJobContext m_submitted_context;
    std::optional<JobEnvironment> m_submitted_environment;
    RunnerOptions m_options;
    std::optional<TaggedOutput> m_tagged;
    RunningJobs m_jobs; // the one record of each started job, until nothing of it runs

    JobId m_next_job = 1;
    SpawnBackoff m_spawn_backoff; // after the system refused to start a process
    std::optional<GpuUsageWatch> m_usage_watch;
    std::vector<pollfd> m_poll_fds;
    AttemptRecords m_records;
    std::set<JobId> m_failed_jobs; // ended failed while a record of theirs was or may be lost
    RunReport m_report;            // what the user is told of the run as a whole
    bool m_run_error = false;      // an error stopped the run
    struct HeldEnd {
        ProcessId leader;
        JobOutcome outcome;
        Clock::time_point until;
    };
    std::vector<HeldEnd> m_held_ends; // see hold_end
};

} // namespace gpusched::sys
