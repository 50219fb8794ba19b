#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

namespace gpusched::cli {

struct WorkersOptions {
    QueueOptions queue;
    bool json = false;
};

// `gpusched workers [--json]`: the workers serving a queue, each with its host, pid, user,
// GPUs, since when, and how many jobs it runs.
CLI::App* add_workers_command(CLI::App& app, WorkersOptions& options);
int run_workers(const WorkersOptions& options);

} // namespace gpusched::cli
