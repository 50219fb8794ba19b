#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

#include <cstdint>
#include <optional>
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
    bool json = false;      // the ids queued, as JSON
    // What each job asks of its worker, over the worker's options; and the label the jobs go
    // by, usable in place of their ids.
    std::optional<std::size_t> gpus_per_job;
    std::optional<std::uint64_t> memory; // bytes
    std::optional<double> timeout_seconds;
    std::optional<unsigned> retries;
    std::optional<int> nice;
    std::string name;
    // What the jobs wait for: ids, ranges or labels, each job's end (--after) or success
    // (--after-ok).
    std::vector<std::string> after;
    std::vector<std::string> after_ok;
    // What of the environment the jobs carry (NAME, PREFIX* or NAME=VALUE), and whether all
    // of it on a Redis queue (the local queue always keeps all of it).
    std::vector<std::string> env;
    bool env_all = false;
    // `submit [OPTIONS] -- CMD ARGS...`: one command, its words as given (quoted for the
    // shell when queued), instead of the inputs.
    std::vector<std::string> command;
};

// Takes what follows `--` in `submit`'s arguments (`args`, the subcommand first) as the one
// command to queue: out of `args`, into `command`.
void take_submitted_command(std::vector<std::string>& args, std::vector<std::string>& command);

// `gpusched submit [--redis URL] [--queue NAME] [--wait] [FILE ... | -- CMD ARGS...]`: queues
// the commands of the inputs (read by the rules of a run), or one command, for the workers,
// and prints the ids queued; with --wait, follows them to their end.
CLI::App* add_submit_command(CLI::App& app, SubmitOptions& options);
int run_submit(const SubmitOptions& options);

} // namespace gpusched::cli
