#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace gpusched::cli {

struct ServeOptions {
    std::string listen = "127.0.0.1:8787";
    bool allow_actions = false;
    bool share_output = false; // jobs' output readable without the token
    bool no_queue = false;
    std::vector<std::string> gpus;
    std::string lock_dir;
    double probe_timeout_seconds = 30;
    double sample_seconds = 5;
    QueueOptions queue;
};

// `gpusched serve`: a live web page of this server (docs/serve.md): the GPUs, who holds and
// waits for them, the fair-share standing, the queue and its jobs' output, the timeline; and
// the JSON API under it.
CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

} // namespace gpusched::cli
