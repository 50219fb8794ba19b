#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace gpusched::cli {

struct SubmitOptions {
    QueueOptions queue;
    std::vector<std::string> inputs;
    bool wait = false;
    double connect_timeout_seconds = 10;
    bool quiet = false;
    long long priority = 0; // higher runs first
    bool front = false;     // ahead of the queued jobs of its priority
    bool no_start = false;  // start no worker, even when none serves the local queue
};

// `gpusched submit --redis URL [--queue NAME] [--wait] [FILE ...]`: queues the commands of the
// inputs (read by the rules of a run) for the workers; with --wait, follows them to their end.
CLI::App* add_submit_command(CLI::App& app, SubmitOptions& options);
int run_submit(const SubmitOptions& options);

} // namespace gpusched::cli
