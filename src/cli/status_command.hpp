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

// `gpusched status [--json]`: each GPU, free or leased, and by whom (user, PID, command,
// since when) from the record its holder keeps in the lock file.
CLI::App* add_status_command(CLI::App& app, StatusOptions& options);
int run_status(const StatusOptions& options);

} // namespace gpusched::cli
