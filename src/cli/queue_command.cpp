#include "queue_command.hpp"

#include "open_queue.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/queue/queue_json.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/job_request.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/visible_text.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpusched::cli {
namespace {

// "since 10:02:03 (5 min 12 s)" from seconds since the epoch; taken but not yet started
// when there is none.
std::string since(double started)
{
    if (started == 0) {
        return "(taken, starting)";
    }
    const auto age = std::chrono::duration<double>(seconds_since_epoch() - started);
    return fmt::format(
        "since {:%H:%M:%S} ({})", local_time_of(started),
        format_duration(std::chrono::duration_cast<std::chrono::steady_clock::duration>(age)));
}

// "HOST " of the worker running a job, as the listing's workers say; "" when unknown.
std::string host_of(const queue::QueueListing& listing, const std::string& worker)
{
    for (const auto& candidate : listing.workers) {
        if (candidate.id == worker && !candidate.host.empty()) {
            return visible_text(candidate.host) + " ";
        }
    }
    return "";
}

// "job 12", or "job 12 [LABEL]" for a job submitted with --name.
std::string job_called(const queue::JobRecord& job)
{
    return job.name.empty() ? fmt::format("job {}", job.id)
                            : fmt::format("job {} [{}]", job.id, visible_text(job.name));
}

// " for 12, 13 to end, 14 to succeed": what a waiting job waits for.
std::string waits_for(const queue::JobRecord& job)
{
    std::vector<std::string> ends;
    std::vector<std::string> successes;
    for (const auto& dependency : job.after) {
        (dependency.ok ? successes : ends).push_back(std::to_string(dependency.id));
    }
    std::string text;
    if (!ends.empty()) {
        text += fmt::format(" for {} to end", fmt::join(ends, ", "));
    }
    if (!successes.empty()) {
        text += fmt::format("{} {} to succeed", text.empty() ? " for" : ",",
                            fmt::join(successes, ", "));
    }
    return text;
}

// " in DIR (USER)": where and as whom a job runs, where the queue recorded it.
std::string origin_of(const queue::JobRecord& job)
{
    std::string origin;
    if (!job.directory.empty()) {
        origin += " in " + visible_text(job.directory);
    }
    if (!job.submitter.user.empty()) {
        origin += " (" + visible_text(job.submitter.describe()) + ")";
    }
    return origin;
}

// " (GPU memory 20 GiB)": what a job asked for of each GPU with --mem, "" where nothing.
std::string memory_asked_of(const queue::JobRecord& job)
{
    if (!job.memory_asked) {
        return {};
    }
    return fmt::format(" (GPU memory {})", *job.memory_asked == k_learned_memory
                                               ? std::string("learned")
                                               : format_memory_size(*job.memory_asked));
}

// The listing of any queue, from its backend. What the queue's users wrote (commands, labels,
// directories, hosts, names) is shown with visible_text: it reaches everyone's terminal.
int show_queue(queue::QueueBackend& queue, const QueueCommandOptions& options)
{
    const auto listing = queue.list({.queued = options.queued_shown, .recent = options.failures});
    if (options.json) {
        auto json = json_document("queue");
        queue::add_listing_json(listing, options.queue.queue, queue.describe(), 0, json);
        fmt::print("{}", format_json(json));
        return k_exit_success;
    }
    fmt::print("{}{}\n", queue.describe(),
               listing.paused.contains("") ? ": paused, nothing new starts" : "");
    for (const auto& gpu : listing.paused) {
        if (!gpu.empty()) {
            fmt::print("paused    GPU {}: nothing new starts there\n", visible_text(gpu));
        }
    }
    fmt::print(
        "queued    {}{}\nrunning   {}\nfinished  {} succeeded, {} failed, {} cancelled, {} "
        "refused{}\n",
        listing.queued,
        listing.waiting > 0 ? fmt::format(", and {} waiting for other jobs", listing.waiting) : "",
        listing.running.size(), listing.succeeded, listing.failed, listing.cancelled,
        listing.refused, listing.skipped > 0 ? fmt::format(", {} skipped", listing.skipped) : "");
    if (listing.returned.value_or(0) > 0) {
        fmt::print("returned  {} a job went back to the queue unfinished\n",
                   counted(static_cast<std::size_t>(*listing.returned), "time"));
    }
    if (listing.workers.empty()) {
        fmt::print("workers   none: start one with `gpusched worker`\n");
    }
    for (const auto& worker : listing.workers) {
        fmt::print("worker    {} (pid {}{}) on GPUs {} {}\n", visible_text(worker.host), worker.pid,
                   worker.user.empty() ? "" : ", " + visible_text(worker.user),
                   worker.gpus.empty() ? "-" : visible_text(worker.gpus), since(worker.since));
    }
    for (const auto& job : listing.running) {
        fmt::print("  {} on {}GPU {} {}{}{}: {}\n", job_called(job), host_of(listing, job.worker),
                   job.gpu.empty() ? "-" : visible_text(job.gpu), since(job.started),
                   memory_asked_of(job), origin_of(job), shown_command(job.command));
    }
    if (!listing.first_queued.empty()) {
        fmt::print("next:\n");
    }
    std::size_t position = 0;
    for (const auto& job : listing.first_queued) {
        fmt::print("  {:>4}. {}{}{}{}: {}\n", ++position, job_called(job),
                   job.priority != 0 ? fmt::format(" (priority {})", job.priority) : "",
                   memory_asked_of(job), origin_of(job), shown_command(job.command));
    }
    if (listing.queued > static_cast<std::int64_t>(listing.first_queued.size())) {
        fmt::print("  ... and {} more\n",
                   listing.queued - static_cast<std::int64_t>(listing.first_queued.size()));
    }
    if (!listing.first_waiting.empty()) {
        fmt::print("waiting:\n");
    }
    for (const auto& job : listing.first_waiting) {
        fmt::print("  {}{}{}: {}\n", job_called(job), waits_for(job), origin_of(job),
                   shown_command(job.command));
    }
    if (listing.waiting > static_cast<std::int64_t>(listing.first_waiting.size())) {
        fmt::print("  ... and {} more\n",
                   listing.waiting - static_cast<std::int64_t>(listing.first_waiting.size()));
    }
    if (!listing.recent.empty()) {
        fmt::print("recent:\n");
    }
    for (const auto& job : listing.recent) {
        const JobOutcome outcome{job.exit_code, job.signal};
        // What it used of a GPU at most, where it was watched (it asked for memory): the
        // size to ask for next time.
        auto peak = job.peak_memory > 0
                        ? fmt::format(", GPU memory peak {}", format_memory_size(job.peak_memory))
                        : std::string{};
        if (job.memory_reruns > 0) {
            peak += fmt::format(", run again {} after running out of GPU memory beside others",
                                counted(job.memory_reruns, "time"));
        }
        fmt::print("  {} {}{}: {}\n", job_called(job),
                   job.state == queue::JobState::succeeded || job.state == queue::JobState::failed
                       ? describe_outcome(outcome)
                       : visible_text(queue::describe_end(job.state, job.note)),
                   peak, shown_command(job.command));
    }
    return k_exit_success;
}

} // namespace

CLI::App* add_queue_command(CLI::App& app, QueueCommandOptions& options)
{
    auto* command = app.add_subcommand(
        "queue", "Show a queue: queued, running (where, since when), finished, the latest ends");
    add_queue_options(*command, options.queue, false);
    command->add_option("--next", options.queued_shown, "How many of the queued jobs to list")
        ->transform(whole_number_check(0, 100000))
        ->type_name("N")
        ->capture_default_str();
    command->add_option("--failures", options.failures,
                        "How many of the latest failures (of a local queue: ended jobs) to list")
        ->transform(whole_number_check(0, 10000))
        ->type_name("N")
        ->capture_default_str();
    command->add_flag("--json", options.json, "Print JSON instead of text");
    auto* purge = command->add_flag(
        "--purge", options.purge,
        "Remove the ended jobs, their results and their output (ended jobs expire on their own "
        "after 7 days)");
    command
        ->add_option("--older-than", options.older_than_seconds,
                     "With --purge: only the jobs that ended longer ago than this")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->needs(purge);
    return command;
}

int purge(const QueueCommandOptions& options)
{
    auto queue = open_queue(options.queue);
    std::optional<double> before;
    if (options.older_than_seconds) {
        before = seconds_since_epoch() - *options.older_than_seconds;
    }
    const auto removed = queue->purge(before);
    fmt::print("{} removed from {}\n", counted(static_cast<std::size_t>(removed), "ended job"),
               queue->describe());
    return k_exit_success;
}

int run_queue(const QueueCommandOptions& options)
{
    if (options.purge) {
        return purge(options);
    }
    auto queue = open_queue(options.queue);
    return show_queue(*queue, options);
}

} // namespace gpusched::cli
