#include "submit_command.hpp"

#include "command_line_errors.hpp"
#include "input_chunks.hpp"
#include "local_submit.hpp"
#include "option_values.hpp"
#include "redis_retry.hpp"
#include "submit_wait.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/redis/job_signature.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/sys/input_reader.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace gpusched::cli {
namespace {

// Commands sent in one round trip.
constexpr std::size_t k_chunk = 500;

// How long one command may take before the connection counts as lost: longer than the
// wait's blocking read (2 s), short enough that a server gone silent is noticed.
constexpr std::chrono::seconds k_command_timeout{5};

struct Submitted {
    std::string batch;
    std::size_t rejected = 0; // commands that cannot run (a NUL byte, over 16 MiB)
};

// Queues the commands of the input as one batch. Throws RedisUnreachable saying what was
// submitted when Redis stays out of reach.
Submitted submit_input(const SubmitOptions& options, RedisConnection& redis,
                       const queue::RedisQueue& jobs, Submission& submission)
{
    const auto key = read_key(options.queue);
    sys::InputReader input(options.inputs, std::nullopt);
    if (const auto gave_up = redis.connect()) {
        throw RedisUnreachable(*gave_up);
    }
    submission.open();
    auto& client = redis.client();
    Submitted submitted;
    submitted.batch = std::to_string(submission.call([&] { return jobs.new_batch(client); }));
    std::size_t seq = 0;
    std::size_t count = 0;
    while (true) {
        const auto lines = read_chunk(input, k_chunk);
        if (lines.empty()) {
            break;
        }
        std::vector<queue::RedisQueue::NewJob> chunk;
        for (const auto& line : lines) {
            ++seq;
            if (line.line.fault != LineFault::none) {
                spdlog::error("{}:{}: command {} not submitted: {}", line.source,
                              line.line.first_line, seq, describe_fault(line.line.fault));
                ++submitted.rejected;
                continue;
            }
            chunk.push_back({"", line.line.text, std::to_string(seq), ""});
        }
        if (chunk.empty()) {
            continue;
        }
        const auto size = static_cast<long long>(chunk.size());
        const auto last = submission.call([&] { return jobs.reserve_ids(client, size); });
        std::vector<std::string> ids;
        for (long long i = 0; i < size; ++i) {
            auto& job = chunk[static_cast<std::size_t>(i)];
            job.id = std::to_string(last - size + 1 + i);
            job.signature = key ? sign_job(*key, options.queue.queue, job.id, job.command) : "";
            ids.push_back(job.id);
        }
        submission.add(ids);
        submission.call([&] {
            return jobs.submit(client, submitted.batch, chunk, options.priority, options.front)
                       ? std::optional(true)
                       : std::nullopt;
        });
        // A reset between two chunks would leave this one in a queue without the others.
        submission.check_marker();
        submission.confirm();
        count += chunk.size();
    }
    spdlog::info("{} submitted to queue {} at {} (batch {})", counted(count, "job"),
                 options.queue.queue, redis.address(), submitted.batch);
    return submitted;
}

int submit(const SubmitOptions& options)
{
    RedisConnection redis(redis_url_of(options.queue), k_command_timeout,
                          RetryPolicy{to_milliseconds(options.connect_timeout_seconds)});
    const queue::RedisQueue jobs(options.queue.queue);
    Submission submission(redis, jobs);
    Submitted submitted;
    try {
        submitted = submit_input(options, redis, jobs, submission);
    } catch (const RedisUnreachable& error) {
        throw RedisUnreachable(
            fmt::format("{}; {}", error.what(), submission.describe_submitted()));
    }
    if (!options.wait) {
        return exit_status_for_failures(submitted.rejected);
    }
    const auto failed = submitted.rejected + submission.wait(submitted.batch);
    const auto total = submission.size() + submitted.rejected;
    spdlog::info("{}: {} succeeded, {} failed", counted(total, "job"), total - failed, failed);
    return exit_status_for_failures(failed);
}

} // namespace

CLI::App* add_submit_command(CLI::App& app, SubmitOptions& options)
{
    auto* submit =
        app.add_subcommand("submit", "Queue commands for `gpusched worker`s to run (in a local "
                                     "queue, or in Redis with --redis)");
    add_queue_options(*submit, options.queue, true);
    submit
        ->add_option("FILE", options.inputs,
                     "Command files read in order ('-' is stdin; default: stdin)")
        ->type_name("");
    submit->add_flag(
        "--wait", options.wait,
        "Follow the jobs to their end, logging each; exit as a run would. It waits as long as "
        "Redis answers; when Redis stays out of reach past --connect-timeout it exits with 75, "
        "naming the jobs whose outcome is unknown, and when the queue was reset (FLUSHALL, "
        "Redis restarted without its data) with 255, naming the jobs lost");
    submit
        ->add_option("--connect-timeout", options.connect_timeout_seconds,
                     "How long to keep trying to reach Redis, at the start and after a lost "
                     "connection (pauses of 0.1 s doubling to 2 s), before giving up with exit "
                     "status 75")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str()
        ->envname("GPUSCHED_CONNECT_TIMEOUT");
    submit
        ->add_option("--priority", options.priority,
                     "Run before every queued job of a lower priority (negative: after)")
        ->transform(integer_check(-1'000'000, 1'000'000))
        ->type_name("N")
        ->capture_default_str();
    submit->add_flag("--front", options.front,
                     "Put the jobs ahead of the queued ones of their priority, in their order");
    submit
        ->add_flag("--no-start", options.no_start,
                     "Start no worker when none serves the local queue (by default the first "
                     "submit starts one in the background, on the GPUs a run would use)")
        ->envname("GPUSCHED_NO_START");
    submit->add_flag("-q,--quiet", options.quiet, "Log only errors");
    return submit;
}

int run_submit(const SubmitOptions& options)
{
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    }
    if (options.queue.is_local()) {
        return submit_to_local_queue(options);
    }
    try {
        return submit(options);
    } catch (const RedisUnreachable& error) {
        // Not a fault of the queue: the same submit may work later (sysexits' EX_TEMPFAIL).
        fmt::print(stderr, "{}: error: {}\n", program_name(), error.what());
        return k_exit_temporary_failure;
    }
}

} // namespace gpusched::cli
