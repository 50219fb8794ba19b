#pragma once

#include "queue_options.hpp"
#include "run_command.hpp"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace gpusched::cli {

struct WorkerOptions {
    QueueOptions queue;
    double lease_timeout_seconds = 30;
    std::string spool; // empty: the default directory
    RunOptions run;
    // `worker --stop [ID...] [--now]`: asks the queue's workers (those named, else all of
    // them that are ours) to stop, rather than running one.
    bool stop = false;
    std::vector<std::string> stop_ids;
    bool now = false;
    // `worker --update`: this worker takes over the queue from the workers of ours on this
    // host, which finish their running jobs and start none (a change of GPUs, of options).
    bool update = false;
};

// `gpusched worker --redis URL [--queue NAME] [GPU and job options]`: takes jobs from the
// queue whenever a GPU is free and runs them exactly as a local run would.
CLI::App* add_worker_command(CLI::App& app, WorkerOptions& options);
int run_worker(WorkerOptions options);

} // namespace gpusched::cli
