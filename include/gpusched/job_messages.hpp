#pragma once

#include <gpusched/job.hpp>
#include <gpusched/process_table.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// "exit 0", "exit 3", "killed by SIGTERM".
std::string describe_outcome(const JobOutcome& outcome);

// "SIGTERM"; "signal 40" for one with no name.
std::string signal_name(int signal);

// A command as shown in the log: long ones are cut, with a note of the size left out.
std::string shorten_command(std::string_view command);

// "pid 812 (sleep), pid 815 (python3)": what a job left running, a few of them named.
std::string describe_processes(const std::vector<ProcessInfo>& processes);

// "1.520 s", "2 min 03 s".
std::string format_duration(std::chrono::steady_clock::duration duration);

// What the progress line shows.
struct ProgressSnapshot {
    std::size_t succeeded = 0;
    std::size_t failed = 0;
    std::size_t cancelled = 0; // by `gpusched cancel` while running
    std::size_t running = 0;
    std::size_t queued = 0;
    bool input_ended = false; // else more may come than `queued`
    std::size_t slots = 1;
    std::chrono::steady_clock::duration elapsed{};
    std::chrono::steady_clock::duration busy{}; // summed run time of finished attempts
    std::size_t attempts = 0;                   // finished attempts
    // What the run waits for, when a GPU it wants is another's: "waiting for GPU 2, held by
    // alice's run 4711 since 10:02".
    std::string waiting;
};

// "12 done (1 failed), 4 running, 84 queued, 1 min 23 s elapsed, ETA 9 min 12 s". The ETA is
// the mean attempt time times the jobs left, over the GPUs; it is shown once known.
std::string format_progress(const ProgressSnapshot& progress);

} // namespace gpusched
