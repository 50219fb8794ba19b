#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

#include <optional>

namespace gpusched::cli {

struct QueueCommandOptions {
    QueueOptions queue;
    std::size_t failures = 10;
    std::size_t queued_shown = 10;
    bool json = false;
    bool purge = false;
    std::optional<double> older_than_seconds;
};

// `gpusched queue --redis URL [--queue NAME]`: queued, running (where and since when) and
// finished counts, and the latest failures.
CLI::App* add_queue_command(CLI::App& app, QueueCommandOptions& options);
int run_queue(const QueueCommandOptions& options);

} // namespace gpusched::cli
