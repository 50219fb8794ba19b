#include "queue_command.hpp"

#include "option_values.hpp"

#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/job_queue.hpp>

#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace gpusched::cli {
namespace {

// "since 10:02:03 (5 min 12 s)" from seconds since the epoch; taken but not yet started
// when there is none.
std::string since(const std::string& started)
{
    if (started.empty()) {
        return "(taken, starting)";
    }
    const double at = std::atof(started.c_str());
    const auto local = local_time_of(at);
    const auto age = std::chrono::duration<double>(seconds_since_epoch() - at);
    return fmt::format(
        "since {:%H:%M:%S} ({})", local,
        format_duration(std::chrono::duration_cast<std::chrono::steady_clock::duration>(age)));
}

} // namespace

CLI::App* add_queue_command(CLI::App& app, QueueCommandOptions& options)
{
    auto* command = app.add_subcommand(
        "queue", "Show a Redis queue: queued, running (host, GPU, since), finished, failures");
    add_queue_options(*command, options.queue, false);
    command->add_option("--failures", options.failures, "How many of the latest failures to list")
        ->transform(whole_number_check(0, 10000))
        ->type_name("N")
        ->capture_default_str();
    command->add_flag("--json", options.json, "Print JSON instead of text");
    return command;
}

int run_queue(const QueueCommandOptions& options)
{
    const auto url = redis_url_of(options.queue);
    queue::RedisClient redis(url, std::chrono::seconds(5));
    if (!redis.connect()) {
        throw std::runtime_error(redis.error());
    }
    const queue::JobQueue jobs(options.queue.queue);
    const auto status = jobs.status(redis, options.failures);
    if (!status) {
        throw std::runtime_error(redis.error());
    }
    if (options.json) {
        nlohmann::ordered_json json = {{"queue", options.queue.queue},
                                       {"queued", status->pending},
                                       {"running", nlohmann::ordered_json::array()},
                                       {"submitted", status->submitted},
                                       {"succeeded", status->succeeded},
                                       {"failed", status->failed},
                                       {"refused", status->refused},
                                       {"returned", status->returned},
                                       {"failures", nlohmann::ordered_json::array()}};
        for (const auto& job : status->running) {
            json["running"].push_back({{"id", job.id},
                                       {"worker", job.worker},
                                       {"host", job.host},
                                       {"gpu", job.gpu},
                                       {"since", job.started},
                                       {"command", job.command}});
        }
        for (const auto& job : status->failures) {
            json["failures"].push_back(job.fields);
        }
        fmt::print("{}\n",
                   json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
        return k_exit_success;
    }
    fmt::print("queue {} at {}\n", options.queue.queue, describe_redis_url(url));
    fmt::print("queued    {}\nrunning   {}\nfinished  {} succeeded, {} failed, {} refused (of {} "
               "submitted)\nreturned  {} times a job went back to the queue unfinished\n",
               status->pending, status->running.size(), status->succeeded, status->failed,
               status->refused, status->submitted, status->returned);
    for (const auto& job : status->running) {
        fmt::print("  job {} on {} GPU {} {}: {}\n", job.id, job.host,
                   job.gpu.empty() ? "-" : job.gpu, since(job.started),
                   shorten_command(job.command));
    }
    if (!status->failures.empty()) {
        fmt::print("latest failures:\n");
    }
    for (const auto& job : status->failures) {
        const JobOutcome outcome{std::atoi(job.field("exit").c_str()),
                                 std::atoi(job.field("signal").c_str())};
        fmt::print("  job {} on {}: {}: {}\n", job.id, job.field("host"),
                   job.field("outcome") == "refused" ? "refused, " + job.field("note")
                                                     : describe_outcome(outcome),
                   shorten_command(job.field("command")));
    }
    return k_exit_success;
}

} // namespace gpusched::cli
