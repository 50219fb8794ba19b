#include "local_submit.hpp"

#include "input_chunks.hpp"
#include "job_end_report.hpp"
#include "worker_autostart.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/worker_presence.hpp>
#include <gpusched/sys/input_reader.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <set>
#include <thread>

namespace gpusched::cli {
namespace {

using namespace std::chrono_literals;

// Commands written in one transaction.
constexpr std::size_t k_chunk = 10'000;
// Another process may hold the write lock for a moment (a worker recording a result).
constexpr std::chrono::seconds k_busy_timeout{10};
// How often --wait looks for ended jobs.
constexpr auto k_wait_round = 200ms;

std::string jobs(std::size_t count)
{
    return counted(count, "job");
}

// Follows the jobs of `batch` until each has ended; the number that failed.
std::size_t wait_for(queue::SqliteQueue& queue, std::int64_t batch, std::size_t count)
{
    std::set<std::int64_t> reported;
    std::size_t failed = 0;
    while (reported.size() < count) {
        const auto progress = queue.batch_progress(batch);
        for (const auto& job : progress.ended) {
            if (reported.insert(job.id).second) {
                failed += report_job_end(job) ? 0 : 1;
            }
        }
        if (progress.unended == 0 && reported.size() < count) {
            // Removed (queue --purge) before its end was seen here.
            const auto lost = count - reported.size();
            spdlog::error("{} removed from the queue before their end was seen", jobs(lost));
            return failed + lost;
        }
        if (reported.size() < count) {
            std::this_thread::sleep_for(k_wait_round);
        }
    }
    return failed;
}

} // namespace

int submit_to_local_queue(const SubmitOptions& options)
{
    const auto path = local_database_of(options.queue);
    queue::Database database(path, k_busy_timeout);
    queue::prepare_sqlite_queue_schema(database);
    queue::SqliteQueue queue(database, options.queue.queue);
    sys::InputReader input(options.inputs, std::nullopt);
    const auto batch = queue.new_batch();
    std::vector<std::int64_t> ids;
    std::size_t rejected = 0;
    std::size_t seq = 0;
    bool start_looked_at = false;
    while (true) {
        const auto lines = read_chunk(input, k_chunk);
        if (lines.empty()) {
            break;
        }
        std::vector<queue::NewSqliteJob> chunk;
        chunk.reserve(lines.size());
        for (const auto& line : lines) {
            ++seq;
            if (line.line.fault != LineFault::none) {
                spdlog::error("{}:{}: command {} not submitted: {}", line.source,
                              line.line.first_line, seq, describe_fault(line.line.fault));
                ++rejected;
                continue;
            }
            chunk.push_back({line.line.text});
        }
        try {
            const auto added = queue.submit_to(batch, chunk, {options.priority, options.front});
            ids.insert(ids.end(), added.begin(), added.end());
        } catch (const queue::DatabaseError& error) {
            // Each chunk is one transaction: those before it are queued whole, it is not.
            throw queue::DatabaseError(
                fmt::format("{}; {}", error.what(),
                            ids.empty() ? std::string("nothing was submitted")
                                        : fmt::format("{} were submitted (ids {} to {}), the "
                                                      "commands after them were not",
                                                      jobs(ids.size()), ids.front(), ids.back())),
                error.code());
        }
        queue::wake_workers(path);
        if (!options.no_start && !ids.empty() && !start_looked_at) {
            start_looked_at = true;
            start_worker_if_none(path, queue);
        }
    }
    spdlog::info("{} submitted to queue {} in {}", jobs(ids.size()),
                 options.queue.queue, path.string());
    if (options.no_start && !ids.empty()) {
        try {
            if (!served_by_a_worker(path, queue)) {
                spdlog::warn("no worker serves queue {}: the jobs wait for `gpusched worker`",
                             options.queue.queue);
            }
        } catch (const queue::DatabaseError&) {
            // Only a hint: the jobs are queued whatever it would have said.
        }
    }
    if (!options.wait) {
        return exit_status_for_failures(rejected);
    }
    const auto failed = rejected + wait_for(queue, batch, ids.size());
    const auto total = ids.size() + rejected;
    spdlog::info("{}: {} succeeded, {} failed", jobs(total), total - failed,
                 failed);
    return exit_status_for_failures(failed);
}

} // namespace gpusched::cli
