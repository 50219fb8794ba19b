#include <gpusched/queue/sqlite/sqlite_submission.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/lease_names.hpp>
#include <gpusched/queue/sqlite/database_changes.hpp>
#include <gpusched/queue/sqlite/database_ownership.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/worker_presence.hpp>
#include <gpusched/queue/submitted_gpus.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace gpusched::queue {
namespace {

using namespace std::chrono_literals;

// Commands written in one transaction.
constexpr std::size_t k_jobs_per_transaction = 10'000;
// Another process may hold the write lock for a moment (a worker recording a result).
constexpr std::chrono::seconds k_submit_busy_timeout{10};
// A wait looks for ended jobs each time the database is written, but not more often than
// this while many of its jobs are left (a worker may commit thousands of times a second), and
// than the second for its last few, so that it returns soon after the last has ended; and for
// every job of its batch, and for workers that ended, every second.
constexpr auto k_least_between_looks = 10ms;
constexpr auto k_least_between_last_looks = 2ms;
constexpr std::size_t k_few_left = 64;
constexpr auto k_whole_look_every = 1s;

std::string jobs(std::size_t count)
{
    return counted(count, "job");
}

class SqliteSubmission final : public Submission {
public:
    SqliteSubmission(const std::filesystem::path& database, SubmissionSettings settings)
        : m_path(trusted_database_location(database)), m_settings(std::move(settings)),
          m_database(m_path, k_submit_busy_timeout),
          m_queue((prepare_sqlite_queue_schema(m_database), m_database), m_settings.queue),
          m_origin{m_settings.context, m_settings.submitter, m_settings.name},
          m_batch(m_queue.new_batch(&m_origin, m_settings.after))
    {
    }

    std::size_t chunk_size() const override { return k_jobs_per_transaction; }

    void add(const std::vector<CommandToQueue>& commands) override
    {
        std::vector<NewSqliteJob> chunk;
        chunk.reserve(commands.size());
        for (const auto& command : commands) {
            chunk.push_back({command.command});
        }
        try {
            const auto added = m_queue.submit_to(m_batch, chunk, m_order);
            m_ids.insert(m_ids.end(), added.begin(), added.end());
        } catch (const DatabaseError& error) {
            // Each chunk is one transaction: those before it are queued whole, it is not.
            throw DatabaseError(
                fmt::format("{}; {}", error.what(),
                            m_ids.empty()
                                ? std::string("nothing was submitted")
                                : fmt::format("{} were submitted (ids {} to {}), "
                                              "the commands after them were not",
                                              jobs(m_ids.size()), m_ids.front(), m_ids.back())),
                error.code());
        }
        wake_workers(m_path);
        if (m_settings.start_worker && !m_ids.empty() && !std::exchange(m_start_looked_at, true)) {
            start_worker_if_none();
        }
    }

    void close() override
    {
        spdlog::info("{} submitted to queue {} in {}", jobs(m_ids.size()), m_settings.queue,
                     m_path.string());
        say_if_other_gpus();
        if (m_settings.start_worker || m_ids.empty()) {
            return;
        }
        try {
            if (!served()) {
                spdlog::warn("no worker serves queue {}: the jobs wait for `gpusched worker`",
                             m_settings.queue);
            }
        } catch (const DatabaseError&) {
            // Only a hint: the jobs are queued whatever it would have said.
        }
    }

    std::size_t size() const override { return m_ids.size(); }
    std::vector<std::int64_t> ids() const override { return m_ids; }

    std::size_t wait(const std::function<bool(const EndedJob&)>& report) override
    {
        // Each commit wakes the wait, which then reads only the jobs ended since the latest it
        // saw (ends are recorded under the write lock, so in the order of their times); once a
        // second it reads the whole batch, for what a clock set back would hide and for jobs
        // removed before their end was seen.
        DatabaseChanges changes(m_path);
        std::set<std::int64_t> reported;
        std::size_t failed = 0;
        // None of its jobs ended before it was made (a second's margin for the clock): the
        // queue's earlier ends are never read again.
        double latest_end = m_made - 1;
        auto next_whole_look = std::chrono::steady_clock::now();
        while (reported.size() < m_ids.size()) {
            const auto looked = std::chrono::steady_clock::now();
            const bool whole = looked >= next_whole_look;
            SqliteQueue::BatchProgress progress;
            if (whole) {
                next_whole_look = looked + k_whole_look_every;
                progress = m_queue.batch_progress(m_batch);
            } else {
                progress.ended = m_queue.batch_ended_since(m_batch, latest_end);
            }
            for (const auto& job : progress.ended) {
                latest_end = std::max(latest_end, job.ended);
                if (reported.insert(job.id).second) {
                    EndedJob ended;
                    ended.record = job;
                    failed += report(ended) ? 0 : 1;
                }
            }
            if (whole && progress.unended == 0 && reported.size() < m_ids.size()) {
                // Removed (queue --purge) before its end was seen here.
                const auto lost = m_ids.size() - reported.size();
                spdlog::error("{} removed from the queue before their end was seen", jobs(lost));
                return failed + lost;
            }
            if (reported.size() < m_ids.size()) {
                look_after_workers();
                const auto until_whole = std::chrono::duration_cast<std::chrono::milliseconds>(
                    next_whole_look - std::chrono::steady_clock::now());
                if (changes.wait(std::max(until_whole, 0ms))) {
                    const bool many_left = m_ids.size() - reported.size() > k_few_left;
                    std::this_thread::sleep_until(
                        looked + (many_left ? k_least_between_looks : k_least_between_last_looks));
                }
            }
        }
        return failed;
    }

private:
    // The jobs run on the GPUs of the workers that serve the queue, whatever the submitter's
    // CUDA_VISIBLE_DEVICES says: when it names others, say so (a hint: never throws).
    void say_if_other_gpus()
    {
        const auto& named = m_settings.gpus_named;
        const auto asked = m_settings.context.request.gpus;
        if ((!named && !asked) || m_ids.empty()) {
            return;
        }
        try {
            const auto workers = m_queue.workers();
            if (const auto warning =
                    named ? other_gpus_warning(*named, m_settings.queue, workers) : std::nullopt) {
                spdlog::warn("{}", *warning);
            }
            if (const auto warning =
                    too_few_gpus_warning(m_settings.context.request, m_settings.queue, workers)) {
                spdlog::warn("{}", *warning);
            }
        } catch (const DatabaseError&) {
        }
    }

    // While it waits, every second: a worker that ended (killed, say, by the OOM killer)
    // left its running jobs behind. They go back to the queue, and when no worker serves it
    // any more, one is started (where the submit may start one) or the wait says why it
    // waits. Never throws: the wait goes on whatever happens here.
    void look_after_workers()
    {
        const auto now = std::chrono::steady_clock::now();
        if (now < m_next_look) {
            return;
        }
        m_next_look = now + k_whole_look_every;
        try {
            const auto returned = reclaim_gone_workers(m_queue, m_path, this_host());
            if (returned.value_or(0) > 0) {
                spdlog::warn("{} went back to queue {}: the worker running them ended",
                             jobs(static_cast<std::size_t>(*returned)), m_settings.queue);
                wake_workers(m_path);
            }
            if (!returned || !m_queue.workers().empty()) {
                m_said_unserved = false;
                return;
            }
            if (m_settings.start_worker) {
                start_worker_if_none();
            } else if (!std::exchange(m_said_unserved, true)) {
                spdlog::warn("no worker serves queue {}: the jobs wait for `gpusched worker`",
                             m_settings.queue);
            }
        } catch (const std::exception& error) {
            spdlog::debug("queue {}: its workers not looked at: {}", m_settings.queue,
                          error.what());
        }
    }

    // True when a worker serves the queue (those of workers that are gone are returned
    // first).
    bool served()
    {
        if (!reclaim_gone_workers(m_queue, m_path, this_host())) {
            return true; // cannot be told now: the workers listed are taken as there
        }
        return !m_queue.workers().empty();
    }

    // Never throws: the jobs are queued whatever happens here.
    void start_worker_if_none()
    {
        try {
            if (served()) {
                return;
            }
            // One submitter starts the worker; a racing one sees the name taken and leaves
            // it.
            const auto space = worker_space_of(m_path);
            const auto starting =
                sys::bind_lease(lease_socket_name(space, "starting:" + m_settings.queue));
            if (!starting || served()) {
                return;
            }
            m_settings.start_worker(WorkerToStart{
                m_settings.queue,
                {"--db", std::filesystem::absolute(m_path).string(), "--queue", m_settings.queue},
                m_path.parent_path(),
                [this] { return !m_queue.workers().empty(); }});
        } catch (const std::exception& error) {
            spdlog::error("no worker serves queue {}, and none could be started: {}; the jobs "
                          "wait for `gpusched worker`",
                          m_settings.queue, error.what());
        }
    }

    std::filesystem::path m_path;
    SubmissionSettings m_settings;
    Database m_database;
    SqliteQueue m_queue;
    BatchOrigin m_origin;
    double m_made = seconds_since_epoch(); // before the batch: its jobs end after this
    std::int64_t m_batch = 0;
    SubmitOrder m_order{m_settings.priority, m_settings.front};
    std::vector<std::int64_t> m_ids;
    bool m_start_looked_at = false;
    std::chrono::steady_clock::time_point m_next_look{};
    bool m_said_unserved = false;
};

} // namespace

std::unique_ptr<Submission> open_sqlite_submission(const std::filesystem::path& database,
                                                   SubmissionSettings settings)
{
    return std::make_unique<SqliteSubmission>(database, std::move(settings));
}

} // namespace gpusched::queue
