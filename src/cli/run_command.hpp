#pragma once

#include <gpusched/sys/command_input.hpp>

#include <CLI/App.hpp>

#include <functional>
#include <memory>

#include <optional>
#include <string>
#include <vector>

namespace gpusched::cli {

// The options of the main command: run each input line as a job on a free GPU.
struct RunOptions {
    std::vector<std::string> inputs;
    std::vector<std::string> gpus;
    std::optional<std::string> fifo;
    std::string shell = "/bin/sh";
    double kill_after_seconds = 10;
    double probe_timeout_seconds = 30;
    bool quiet = false;
    bool verbose = false;
    std::optional<std::string> joblog;
    bool resume = false;
    bool resume_failed = false;
    unsigned retries = 0;
    std::string halt = "never";
    std::optional<double> timeout_seconds;
    int nice = 0;
    std::optional<std::string> output_dir;
    bool output_info = true; // DIR/SEQ.info beside each job's output (a worker's own DIR has none)
    bool tag = false;
    bool dry_run = false;
    bool progress = false;
    bool no_progress = false;
    unsigned jobs_per_gpu = 1;
    bool jobs_per_gpu_given = false; // by --jobs-per-gpu or its variable: it caps --mem's jobs
    unsigned gpus_per_job = 1;
    std::optional<std::uint64_t> memory; // --mem, in bytes
    bool uuid = false;
    bool skip_busy = false;
    std::optional<std::uint64_t> max_used_mib;
    double recheck_seconds = 5;
    std::string lock_dir;
    bool no_lock = false;
    double share = 1; // the run's weight in the fair sharing of GPUs with other runs
    bool only_when_free = false; // set for a queue worker, not an option
};

// The options of a run; a queue worker takes them all but those about the input.
void add_run_options(CLI::App& app, RunOptions& options, bool for_worker = false);

// Runs the scheduler to completion and returns the exit status.
int run_scheduler(RunOptions options);

// Runs the jobs of the input `make_input` makes (after the signals are blocked) with the GPU
// and job options of `options`: the scheduler of a run, or of a queue worker. `on_gpus` hears
// the GPU ids once they are known.
// What the runner's input is made of, in its three roles: a run's files are a source alone,
// a queue worker is all three.
struct RunInput {
    std::unique_ptr<sys::CommandSource> source;
    sys::RunnerRequests* requests = nullptr; // none: nothing is asked of the runner
    sys::JobEndSink* ends = nullptr;         // none: the ends go to the run's own records only
};
using InputFactory = std::function<RunInput()>;
int run_jobs(RunOptions& options, const InputFactory& make_input,
             const std::function<void(const std::vector<std::string>&)>& on_gpus = {});

} // namespace gpusched::cli
