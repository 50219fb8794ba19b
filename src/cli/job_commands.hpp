#pragma once

#include "queue_options.hpp"

#include <CLI/App.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpusched::cli {

// The commands that change or follow a queue's jobs, local or on Redis alike:
//   cancel ID...     remove queued jobs, stop running ones (recorded as cancelled)
//   pause [--gpu ID] start nothing new (on that GPU); running jobs go on
//   resume [--gpu ID]
//   retry ID...      queue again jobs that failed, were cancelled or refused
//   logs ID [--follow]
//   wait [ID...]     until they end (all queued and running ones when none is named)
struct JobCommandOptions {
    QueueOptions queue;
    std::vector<std::string> ids;
    std::string gpu;
    bool follow = false;
    std::optional<std::size_t> tail; // logs: only the last N lines of each stream, to begin with
    double connect_timeout_seconds = 10; // wait: how long a Redis out of reach is waited for
};

struct JobCommands {
    CLI::App* cancel = nullptr;
    CLI::App* pause = nullptr;
    CLI::App* resume = nullptr;
    CLI::App* retry = nullptr;
    CLI::App* logs = nullptr;
    CLI::App* wait = nullptr;
};

JobCommands add_job_commands(CLI::App& app, JobCommandOptions& options);
// Runs the one of them that was given; nothing when none was.
std::optional<int> run_job_command(const JobCommands& commands, const JobCommandOptions& options);

// logs and wait (follow_commands.cpp).
int run_logs(const JobCommandOptions& options);
int run_wait(const JobCommandOptions& options);

// The ids given, as numbers: a UsageError names one that is not a job id.
std::vector<std::int64_t> job_ids_of(const std::vector<std::string>& ids);

} // namespace gpusched::cli
