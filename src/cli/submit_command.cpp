#include "submit_command.hpp"

#include "redis_retry.hpp"

#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/job_signature.hpp>
#include <gpusched/queue/job_queue.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/system_error.hpp>

#include <spdlog/spdlog.h>

#include <poll.h>

#include <cerrno>
#include <set>

namespace gpusched::cli {
namespace {

// Commands sent in one round trip.
constexpr std::size_t k_chunk = 500;

// The next commands of the input, up to `count`, waiting for the input when it has none yet.
std::vector<sys::InputLine> read_chunk(sys::InputReader& input, std::size_t count)
{
    std::vector<sys::InputLine> lines;
    while (lines.size() < count) {
        if (auto line = input.next_line()) {
            lines.push_back(std::move(*line));
            continue;
        }
        if (input.finished()) {
            break;
        }
        pollfd ready{input.fd_to_poll(), POLLIN, 0};
        if (poll(&ready, 1, -1) < 0 && errno != EINTR) {
            sys::throw_errno("poll");
        }
        input.read_some();
    }
    return lines;
}

// Logs the end of job `id`; true when it succeeded.
bool report_end(const queue::QueuedJob& job)
{
    const auto& outcome = job.field("outcome");
    const auto runtime = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::atof(job.field("runtime").c_str())));
    const JobOutcome result{std::atoi(job.field("exit").c_str()),
                            std::atoi(job.field("signal").c_str())};
    const auto where = fmt::format("{} GPU {}", job.field("host"), job.field("gpu"));
    const auto command = shorten_command(job.field("command"));
    // The job's place in this submission, and its id in the queue (and in workers' logs).
    const auto name = fmt::format("{} (queue job {})", job.field("seq"), job.id);
    if (outcome == "succeeded") {
        spdlog::info("job {} finished on {}: {} after {}: {}", name, where,
                     describe_outcome(result), format_duration(runtime), command);
        return true;
    }
    if (outcome == "refused") {
        spdlog::error("job {} refused by worker on {}: {}: {}", name, job.field("host"),
                      job.field("note"), command);
        return false;
    }
    spdlog::warn("job {} failed on {}: {} after {}: {}", name, where, describe_outcome(result),
                 format_duration(runtime), command);
    return false;
}

} // namespace

CLI::App* add_submit_command(CLI::App& app, SubmitOptions& options)
{
    auto* submit =
        app.add_subcommand("submit", "Queue commands in Redis for `gpusched worker`s to run");
    add_queue_options(*submit, options.queue, true);
    submit->add_option("FILE", options.inputs,
                       "Command files read in order ('-' is stdin; default: stdin)");
    submit->add_flag("--wait", options.wait,
                     "Follow the jobs to their end, logging each; exit as a run would");
    submit->add_flag("-q,--quiet", options.quiet, "Log only errors");
    return submit;
}

int run_submit(const SubmitOptions& options)
{
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    }
    const auto url = redis_url_of(options.queue);
    const auto key = read_key(options.queue);
    sys::InputReader input(options.inputs, std::nullopt);
    queue::RedisClient redis(url, std::chrono::seconds(5));
    const queue::JobQueue jobs(options.queue.queue);

    const auto batch = std::to_string(with_retry(redis, [&] { return jobs.new_batch(redis); }));
    std::size_t submitted = 0;
    std::size_t rejected = 0;
    std::size_t seq = 0;
    while (true) {
        const auto lines = read_chunk(input, k_chunk);
        if (lines.empty()) {
            break;
        }
        std::vector<queue::JobQueue::NewJob> chunk;
        for (const auto& line : lines) {
            ++seq;
            if (line.line.fault != LineFault::none) {
                spdlog::error("{}:{}: command {} not submitted: {}", line.source,
                              line.line.first_line, seq, describe_fault(line.line.fault));
                ++rejected;
                continue;
            }
            chunk.push_back({"", line.line.text, std::to_string(seq), ""});
        }
        if (chunk.empty()) {
            continue;
        }
        const auto count = static_cast<long long>(chunk.size());
        const auto last = with_retry(redis, [&] { return jobs.reserve_ids(redis, count); });
        for (long long i = 0; i < count; ++i) {
            auto& job = chunk[static_cast<std::size_t>(i)];
            job.id = std::to_string(last - count + 1 + i);
            job.signature = key ? sign_job(*key, options.queue.queue, job.id, job.command) : "";
        }
        with_retry(redis, [&] {
            return jobs.submit(redis, batch, chunk) ? std::optional(true) : std::nullopt;
        });
        submitted += chunk.size();
    }
    spdlog::info("{} jobs submitted to queue {} at {} (batch {})", submitted, options.queue.queue,
                 describe_redis_url(url), batch);
    if (!options.wait) {
        return exit_status_for_failures(rejected);
    }

    std::set<std::string> reported;
    std::size_t failed = rejected;
    bool resync = false;
    while (reported.size() < submitted) {
        auto ended = resync ? jobs.ended_ids(redis, batch) : jobs.wait_ended(redis, batch, 5);
        if (!ended) {
            reconnect(redis);
            resync = true;
            continue;
        }
        resync = false;
        for (const auto& id : *ended) {
            if (reported.count(id) != 0) {
                continue;
            }
            const auto job = with_retry(redis, [&] { return jobs.fetch(redis, id); });
            reported.insert(id);
            failed += report_end(job) ? 0 : 1;
        }
    }
    spdlog::info("{} jobs: {} succeeded, {} failed", submitted + rejected,
                 submitted + rejected - failed, failed);
    return exit_status_for_failures(failed);
}

} // namespace gpusched::cli
