// `gpusched logs` and `gpusched wait`: the commands that follow jobs as they run, asking the
// queue again every fraction of a second (a queue never waits on a caller's behalf).
#include "job_commands.hpp"

#include "command_line_errors.hpp"
#include "job_end_report.hpp"
#include "open_queue.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/submission.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/sys/write_all.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace gpusched::cli {
namespace {

using namespace std::chrono_literals;

constexpr auto k_round = 200ms;
// How long `wait` follows a queued job before it says that no worker serves the queue: a
// worker just starting is not reported.
constexpr auto k_unserved_grace = 2s;

queue::JobRecord job_of(queue::QueueBackend& queue, std::int64_t id)
{
    auto found = queue.jobs({id});
    if (found.empty()) {
        throw std::runtime_error(fmt::format("no job {} in {}", id, queue.describe()));
    }
    return std::move(found.front());
}

// Writes what a job wrote on to our own stream; false when that stream is closed (logs |
// head), which ends the command quietly.
bool pass_on(int fd, const std::string& bytes, std::uint64_t& offset)
{
    offset += bytes.size();
    return bytes.empty() || sys::write_all(fd, bytes);
}

// One run of a job, as its record tells it: which worker took it ("" until one is noted),
// and how many times it went back to the queue before. (Not its start: the one noted at the
// start and the one recorded with the result differ by moments.)
struct Run {
    std::string worker;
    std::int64_t returned = 0;
    bool other_than(const Run& next) const
    {
        return returned != next.returned ||
               (!worker.empty() && !next.worker.empty() && worker != next.worker);
    }
};

// Where the last `lines` lines of a stream of `size` bytes begin: read from its end in
// windows that grow until they hold that many, so a job's 100 MB of output is not read to show
// its last lines. `read(from)` returns the stream from byte `from` on.
template <class Read>
std::uint64_t start_of_last_lines(std::uint64_t size, std::size_t lines, Read read)
{
    if (lines == 0) {
        return size;
    }
    for (std::uint64_t window = 64 * 1024;; window *= 4) {
        const std::uint64_t from = size > window ? size - window : 0;
        const auto text = read(from);
        // A last line without its newline is a line too.
        auto end = text.size();
        if (end > 0 && text[end - 1] == '\n') {
            --end;
        }
        std::size_t found = 0;
        for (auto at = end; at > 0; --at) {
            if (text[at - 1] == '\n' && ++found == lines) {
                return from + at;
            }
        }
        if (from == 0) {
            return 0;
        }
    }
}

} // namespace

int run_logs(const JobCommandOptions& options)
{
    auto queue = open_queue(options.queue);
    auto ids = job_ids_of(options.ids, named_in(*queue));
    if (options.ids.empty()) {
        // As ts and pueue: the caller's latest job, named so that nobody reads another's.
        const auto latest = queue->latest_of(sys::user_name(getuid()));
        if (!latest) {
            throw UsageError(fmt::format("no job of yours in {}: name one by its id (gpusched "
                                         "queue lists them)",
                                         queue->describe()));
        }
        fmt::print(stderr, "{}: job {}, your latest\n", program_name(), *latest);
        ids = {*latest};
    }
    if (ids.size() != 1) {
        throw UsageError(fmt::format("logs shows one job, not {}", ids.size()));
    }
    std::uint64_t out_at = 0;
    std::uint64_t err_at = 0;
    bool said_waiting = false;
    bool said_partial = false;
    bool said_where = false;
    bool tail_placed = false;
    std::optional<Run> following;
    while (true) {
        // The record first: when it says the job ended, the files read after it are whole.
        const auto job = job_of(*queue, ids.front());
        const bool unstarted =
            job.state == queue::JobState::queued || job.state == queue::JobState::waiting;
        if (!unstarted) {
            const Run run{job.worker, job.returned.value_or(0)};
            if (following && following->other_than(run)) {
                // Its worker ended and another runs it again, from the start: what this run
                // writes is shown from its first byte, not joined to the last run's.
                fmt::print(stderr, "job {} started again{}: its output from the start\n", job.id,
                           job.worker.empty() ? "" : " (worker " + visible_text(job.worker) + ")");
                out_at = 0;
                err_at = 0;
            }
            following = run;
        }
        if (unstarted) {
            if (!options.follow) {
                fmt::print(stderr, "job {} is {}: it has not started, so it wrote nothing\n",
                           job.id, queue::to_string(job.state));
                return k_exit_success;
            }
            if (!said_waiting) {
                fmt::print(stderr, "job {} is {}: waiting for it to start\n", job.id,
                           queue::to_string(job.state));
                said_waiting = true;
            }
            std::this_thread::sleep_for(k_round);
            continue;
        }
        if (!said_where && !job.directory.empty()) {
            // Where it ran, for a reader who submitted from several directories.
            fmt::print(stderr, "job {} in {}{}: {}\n", job.id, visible_text(job.directory),
                       job.submitter.user.empty()
                           ? ""
                           : " (" + visible_text(job.submitter.describe()) + ")",
                       shown_command(job.command));
            said_where = true;
        }
        const auto sizes = options.tail && !tail_placed ? queue->output_sizes(job)
                                                        : queue::QueueBackend::OutputSizes{};
        if (options.tail && !tail_placed && (job.ended_state() || sizes.out + sizes.err > 0)) {
            // Once, at the first output there is: the follow goes on from its end.
            out_at = start_of_last_lines(sizes.out, *options.tail, [&](std::uint64_t from) {
                return queue->output(job, from, sizes.err, queue::QueueBackend::k_all).out;
            });
            err_at = start_of_last_lines(sizes.err, *options.tail, [&](std::uint64_t from) {
                return queue->output(job, sizes.out, from, queue::QueueBackend::k_all).err;
            });
            tail_placed = true;
        }
        const auto output = queue->output(job, out_at, err_at, queue::QueueBackend::k_all);
        if (!output.complete && !said_partial) {
            fmt::print(stderr, "(job {}: the beginning of its output was not kept: only the "
                               "last 64 KiB of each stream come back with its result)\n",
                       job.id);
            said_partial = true;
        }
        if (!pass_on(STDOUT_FILENO, output.out, out_at) ||
            !pass_on(STDERR_FILENO, output.err, err_at)) {
            return k_exit_success;
        }
        if (job.ended_state() || !options.follow) {
            if (job.ended_state() && job.started == 0 && job.output.empty()) {
                fmt::print(stderr, "job {} never started ({}), so it wrote nothing\n", job.id,
                           to_string(job.state));
            }
            return k_exit_success;
        }
        std::this_thread::sleep_for(k_round);
    }
}

namespace {

// Asks `ask` of the queue, opened anew while Redis does not answer (a restart, a stall), as
// submit --wait rides it out, for up to the connect timeout; then QueueUnreachable (exit
// status 75: the same wait may work later).
template <class Ask>
auto riding_out(const JobCommandOptions& options, std::unique_ptr<queue::QueueBackend>& queue,
                Ask ask)
{
    std::optional<std::chrono::steady_clock::time_point> give_up_at;
    auto pause = std::chrono::milliseconds(100);
    while (true) {
        try {
            const bool reopened = !queue;
            if (reopened) {
                queue = open_queue(options.queue);
            }
            auto answer = ask(*queue);
            if (reopened && give_up_at) {
                spdlog::info("reached {} again", queue->describe());
            }
            return answer;
        } catch (const UsageError&) {
            throw;
        } catch (const queue::QueueRefused&) {
            throw; // the same password would be refused again
        } catch (const std::exception& error) {
            if (options.queue.is_local()) {
                throw;
            }
            const auto now = std::chrono::steady_clock::now();
            const auto timeout = to_milliseconds(options.connect_timeout_seconds);
            if (!give_up_at) {
                give_up_at = now + timeout;
                spdlog::warn("{}; trying again for up to {}", error.what(),
                             format_duration(timeout));
            }
            if (now >= *give_up_at) {
                throw queue::QueueUnreachable(fmt::format(
                    "{}; gave up after {}: the jobs waited for may still run, and `gpusched "
                    "wait` again follows them",
                    error.what(), format_duration(timeout)));
            }
            queue.reset();
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(2000));
        }
    }
}

int wait_for_jobs(const JobCommandOptions& options)
{
    std::unique_ptr<queue::QueueBackend> queue;
    const auto describe = riding_out(options, queue, [](auto& q) { return q.describe(); });
    auto ids = job_ids_of(options.ids, [&](const std::string& name) {
        return riding_out(options, queue, [&name](auto& q) { return ids_labelled(q, name); });
    });
    if (ids.empty()) {
        ids = riding_out(options, queue, [](auto& q) { return q.unended(); });
        if (ids.empty()) {
            spdlog::info("nothing is queued or running in {}", describe);
            return k_exit_success;
        }
    }
    std::set<std::int64_t> waiting(ids.begin(), ids.end());
    const auto total = waiting.size();
    spdlog::info("waiting for {} in {}", counted(total, "job"), describe);
    std::size_t failed = 0;
    bool first_round = true;
    const auto began = std::chrono::steady_clock::now();
    const auto give_up_at = options.timeout_seconds
                                ? began + to_milliseconds(*options.timeout_seconds)
                                : std::chrono::steady_clock::time_point::max();
    bool said_unserved = false;
    while (!waiting.empty()) {
        const std::vector<std::int64_t> asked(waiting.begin(), waiting.end());
        const auto jobs = riding_out(options, queue, [&](auto& q) { return q.jobs(asked); });
        std::set<std::int64_t> seen;
        std::optional<std::int64_t> queued;
        for (const auto& job : jobs) {
            seen.insert(job.id);
            if (job.ended_state()) {
                failed += report_job_end(job) ? 0 : 1;
                waiting.erase(job.id);
            } else if (job.state == queue::JobState::queued && !queued) {
                queued = job.id;
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (queued && !said_unserved && now - began >= k_unserved_grace) {
            // Said once: a worker may yet come, and the wait goes on for it.
            const auto listing =
                riding_out(options, queue, [](auto& q) { return q.list(queue::ListingWindow{}); });
            if (listing.workers.empty()) {
                fmt::print(stderr,
                           "job {} is queued, and no worker serves {}: it starts once one does "
                           "(`gpusched worker`); still waiting\n",
                           *queued, describe);
            }
            said_unserved = true;
        }
        if (now >= give_up_at && !waiting.empty()) {
            fmt::print(stderr,
                       "{}: error: wait: gave up after {} (--timeout): {} not ended ({}); they "
                       "are left as they are\n",
                       program_name(), format_duration(to_milliseconds(*options.timeout_seconds)),
                       counted(waiting.size(), "job"), fmt::join(waiting, ", "));
            return k_exit_timed_out;
        }
        for (auto id = waiting.begin(); id != waiting.end();) {
            if (seen.contains(*id)) {
                ++id;
                continue;
            }
            if (first_round) {
                spdlog::error("no job {} in {}", *id, describe);
            } else {
                spdlog::error("job {} was removed from the queue before its end was seen", *id);
            }
            ++failed;
            id = waiting.erase(id);
        }
        first_round = false;
        if (!waiting.empty()) {
            if (queue) {
                queue->wait_for_change(k_round);
            } else {
                std::this_thread::sleep_for(k_round);
            }
        }
    }
    spdlog::info("{}: {} succeeded, {} failed", counted(total, "job"), total - failed, failed);
    return exit_status_for_failures(failed);
}

} // namespace

int run_wait(const JobCommandOptions& options)
{
    try {
        return wait_for_jobs(options);
    } catch (const queue::QueueUnreachable& error) {
        fmt::print(stderr, "{}: error: {}\n", program_name(), error.what());
        return k_exit_temporary_failure;
    }
}

} // namespace gpusched::cli
