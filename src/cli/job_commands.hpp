#pragma once

#include "queue_options.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/queue/queue_backend.hpp>

#include <CLI/App.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>
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
    std::optional<double> timeout_seconds; // wait: how long the jobs are waited for at most
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

// The jobs a label given in place of an id stands for: LABEL, the caller's own jobs labelled
// so; USER/LABEL, that user's. Several users share a Redis queue, and a label one of them
// chose (`prep`) must not make another's pipeline wait for, or be skipped by, their job.
std::vector<std::int64_t> ids_labelled(queue::QueueBackend& queue, const std::string& label);

using JobsNamed = std::function<std::vector<std::int64_t>(const std::string&)>;
inline JobsNamed named_in(queue::QueueBackend& queue)
{
    return [&queue](const std::string& label) { return ids_labelled(queue, label); };
}

// No job has the label given in place of an id: a usage error, as a word that is no id is.
class NoSuchJob : public UsageError {
public:
    using UsageError::UsageError;
};

// True for a word that is a label (submit --name), not an id: a letter, then letters, digits
// and - _ . : @ +, at most 100 in all.
bool is_job_name(std::string_view word);
// True for USER/LABEL: a user name (as useradd allows) and a label.
bool is_label_of_a_user(std::string_view word);

// The ids given, as numbers, a label (or USER/LABEL) standing for the jobs `named` finds under
// it: a
// UsageError names a word that is neither an id nor a label, NoSuchJob a label no job has.
std::vector<std::int64_t> job_ids_of(const std::vector<std::string>& ids, const JobsNamed& named);

} // namespace gpusched::cli
