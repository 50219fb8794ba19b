#include "workers_command.hpp"

#include "open_queue.hpp"

#include <gpusched/exit_status.hpp>
#include <gpusched/queue/queue_json.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/visible_text.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace gpusched::cli {

CLI::App* add_workers_command(CLI::App& app, WorkersOptions& options)
{
    auto* command = app.add_subcommand(
        "workers", "List the workers serving a queue: host, pid, user, GPUs, since when, and "
                   "how many jobs each runs");
    add_queue_options(*command, options.queue, false);
    command->add_flag("--json", options.json, "Print JSON instead of text");
    return command;
}

int run_workers(const WorkersOptions& options)
{
    const auto queue = open_queue(options.queue);
    // No queued or ended job is listed: only the workers, and the running jobs to count.
    const auto listing = queue->list({});
    if (options.json) {
        auto json = json_document("workers");
        json["queue"] = options.queue.queue;
        json["where"] = queue->describe();
        auto& workers = json["workers"] = Json::array();
        for (const auto& worker : listing.workers) {
            workers.push_back(
                queue::worker_json(worker, queue::jobs_running_on(listing, worker.id)));
        }
        fmt::print("{}", format_json(json));
        return k_exit_success;
    }
    if (listing.workers.empty()) {
        fmt::print("{}: no worker (start one with `gpusched worker`)\n", queue->describe());
        return k_exit_success;
    }
    fmt::print("{:<28} {:<16} {:>8} {:<12} {:<16} {:<9} {}\n", "WORKER", "HOST", "PID", "USER",
               "GPUS", "SINCE", "RUNNING");
    for (const auto& worker : listing.workers) {
        // Each worker names itself, its host and GPUs: shown so that none acts on the terminal.
        fmt::print("{:<28} {:<16} {:>8} {:<12} {:<16} {:%H:%M:%S}  {}\n", visible_text(worker.id),
                   visible_text(worker.host), worker.pid,
                   worker.user.empty() ? "-" : visible_text(worker.user),
                   worker.gpus.empty() ? "-" : visible_text(worker.gpus),
                   local_time_of(worker.since), queue::jobs_running_on(listing, worker.id));
    }
    return k_exit_success;
}

} // namespace gpusched::cli
