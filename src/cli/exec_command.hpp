#pragma once

#include <CLI/App.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::cli {

struct ExecOptions {
    std::size_t count = 1;
    std::vector<std::string> gpus;
    std::optional<std::uint64_t> memory; // --mem: free GPU memory each GPU needs, in bytes
    bool no_wait = false;
    std::optional<double> timeout_seconds;
    bool uuid = false;
    double probe_timeout_seconds = 30;
    std::string lock_dir;
    bool quiet = false;
    std::vector<std::string> command;
};

// `gpusched exec [-n N] [--no-wait] [--timeout S] -- CMD ARGS...`: waits for N free GPUs
// under the host-wide leases, then becomes CMD with CUDA_VISIBLE_DEVICES set. CMD inherits
// the leases, so they last exactly as long as it does, with nothing to release.
CLI::App* add_exec_command(CLI::App& app, ExecOptions& options);
int run_exec(const ExecOptions& options);

// The arguments after `exec`, with a `--` put where the ids of --gpus end and the command
// starts: at the first word that is not shaped like an id. CLI11 alone gives --gpus every
// word up to the next option, keeping one for CMD, so `exec --gpus 0 echo hello` would lease
// a GPU "echo" and run `hello`, and `exec --gpus 0 python train.py --lr 1` would read --lr
// as its own.
std::vector<std::string> end_gpu_ids(const CLI::App& exec, std::vector<std::string> args);

} // namespace gpusched::cli
