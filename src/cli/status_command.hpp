#pragma once

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace gpusched::cli {

struct StatusOptions {
    std::vector<std::string> gpus;
    bool json = false;
    double probe_timeout_seconds = 30;
    std::string lock_dir;
};

// `gpusched status [--json]`: each GPU, free or leased, and by whom: the user and PID the
// kernel names for its lease socket, and the jobs (PID, command, since when) of the record its
// holder keeps in the lock directory, where that record names the same process.
CLI::App* add_status_command(CLI::App& app, StatusOptions& options);
int run_status(const StatusOptions& options);

} // namespace gpusched::cli
