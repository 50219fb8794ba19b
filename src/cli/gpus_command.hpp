#pragma once

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace gpusched::cli {

struct GpusOptions {
    std::vector<std::string> gpus;
    bool json = false;
    double probe_timeout_seconds = 30;
    std::string lock_dir; // whose lease records say what each GPU's jobs were promised
};

// `gpusched gpus [--gpus IDS] [--json]`: the pool a run would use, with what CUDA and NVML
// tell of each GPU.
CLI::App* add_gpus_command(CLI::App& app, GpusOptions& options);
int run_gpus(const GpusOptions& options);

} // namespace gpusched::cli
