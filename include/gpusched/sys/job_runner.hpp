#pragma once

#include <gpusched/job_environment.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpusched::sys {

// The one event loop: waits in a single poll on the input, a signalfd (signals and child
// exits) and the kill deadline; feeds each event to the scheduler and carries out the
// actions it returns. No sleeps and no polling intervals: it wakes only when something
// happened.
class JobRunner {
public:
    JobRunner(Scheduler& scheduler, InputReader& input, SignalChannel& signals,
              const JobSpawner& spawner, const JobEnvironment& environment,
              std::chrono::milliseconds kill_after);

    // Runs until the scheduler is done; returns gpusched's exit status.
    int run();

private:
    struct RunningJob {
        JobId id = 0;
        GpuSlot gpu = 0;
        std::string command;
        std::chrono::steady_clock::time_point started;
    };

    bool finished() const;
    void wait_for_events();
    void take_input();
    void apply(std::vector<Action> actions);
    void start(StartJob& job);
    void signal_jobs(int signal);
    void reap_children();
    void handle_signals();
    void on_kill_deadline();
    void report_unstarted();

    Scheduler& m_scheduler;
    InputReader& m_input;
    SignalChannel& m_signals;
    const JobSpawner& m_spawner;
    const JobEnvironment& m_environment;
    std::chrono::milliseconds m_kill_after;

    JobId m_next_job = 1;
    std::unordered_map<pid_t, RunningJob> m_running;
    // Process groups already told to stop; their members may outlive the job's shell.
    std::set<pid_t> m_stopping_groups;
    bool m_has_children = false;
    std::optional<std::chrono::steady_clock::time_point> m_kill_deadline;
    std::chrono::steady_clock::time_point m_started;
};

} // namespace gpusched::sys
