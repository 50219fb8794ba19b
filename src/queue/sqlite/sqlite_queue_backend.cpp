#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>

#include <gpusched/queue/sqlite/worker_presence.hpp>
#include <gpusched/sys/output_files.hpp>

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <system_error>
#include <thread>

namespace gpusched::queue {
namespace {

// The queue commands wait this long for another process's write lock: a person can wait
// that long, and every transaction of the queue is far shorter.
constexpr std::chrono::seconds k_listing_busy_timeout{5};
// A reader waits only while a crashed writer's log is recovered; a shell completing a word
// waits no longer than this.
constexpr std::chrono::milliseconds k_read_only_busy_timeout{200};

// The bytes of `path` from `from` on, `most` at most ("" when it does not exist, as before a
// job writes).
std::string read_from(const std::filesystem::path& path, std::uint64_t from, std::uint64_t most)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return {};
    }
    file.seekg(static_cast<std::streamoff>(from));
    if (!file) {
        return {};
    }
    if (most == QueueBackend::k_all) {
        return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    }
    std::string bytes(most, '\0');
    file.read(bytes.data(), static_cast<std::streamsize>(most));
    bytes.resize(static_cast<std::size_t>(file.gcount()));
    return bytes;
}

// The path of a database that must be there, or QueueGone; the path otherwise.
std::filesystem::path present(std::filesystem::path database, WhenMissing missing)
{
    if (missing == WhenMissing::gone && !database_file(database)) {
        throw QueueGone(fate_message(database, DatabaseFate::removed));
    }
    return database;
}

} // namespace

std::int64_t purge_ended_jobs(SqliteQueue& queue, std::optional<double> ended_before)
{
    const auto purged = queue.purge(ended_before);
    for (const auto& job : purged) {
        if (job.output.empty()) {
            continue;
        }
        sys::remove_output_of(job.output, static_cast<JobId>(job.id));
    }
    return static_cast<std::int64_t>(purged.size());
}

SqliteQueueBackend::SqliteQueueBackend(std::filesystem::path database, std::string name,
                                       WhenMissing missing)
    : m_path(present(std::move(database), missing)), m_database(m_path, k_listing_busy_timeout),
      m_queue((prepare_sqlite_queue_schema(m_database), m_database), std::move(name))
{
    // Once open, as a worker does: what each call compares the path with.
    m_file = database_file(m_path);
    m_file_watched = m_file;
    reclaim_gone_workers();
}

SqliteQueueBackend::SqliteQueueBackend(std::filesystem::path database, std::string name, ReadOnly)
    : m_path(present(std::move(database), WhenMissing::gone)),
      m_database(m_path, read_only, k_read_only_busy_timeout), m_queue(m_database, std::move(name)),
      m_read_only(true)
{
    m_file = database_file(m_path);
    m_file_watched = m_file;
}

void SqliteQueueBackend::check_file() const
{
    if (const auto fate = fate_of(m_file, database_file(m_path)); fate != DatabaseFate::same) {
        throw QueueGone(fate_message(m_path, fate));
    }
}

void SqliteQueueBackend::reclaim_gone_workers()
{
    try {
        // Nothing when who is present cannot be told now; the workers look every second.
        if (queue::reclaim_gone_workers(m_queue, m_path, this_host()).value_or(0) > 0) {
            wake_workers(m_path);
        }
    } catch (const DatabaseError& error) {
        if (!error.busy() && (error.code() & 0xff) != SQLITE_READONLY) {
            throw;
        }
        // Another process holds the write lock, or the queue is another user's, which we
        // only read: its workers return those jobs themselves (each looks every second), and
        // a listing must not wait for it.
    }
}

std::string SqliteQueueBackend::describe() const
{
    return fmt::format("queue {} ({})", m_queue.name(), m_path.string());
}

QueueListing SqliteQueueBackend::list(const ListingWindow& shown)
{
    check_file();
    return m_queue.list(shown.queued, shown.recent, shown.queued_from);
}

std::vector<JobRecord> SqliteQueueBackend::jobs(const std::vector<std::int64_t>& ids)
{
    check_file();
    // Asked again and again by `wait` and `logs --follow`: a worker that ended meanwhile
    // (killed) left its jobs running in the records; they go back to the queue.
    const auto now = std::chrono::steady_clock::now();
    if (!m_read_only && now >= m_next_reclaim) {
        m_next_reclaim = now + std::chrono::seconds(1);
        reclaim_gone_workers();
    }
    return m_queue.jobs_of(ids);
}

std::vector<std::int64_t> SqliteQueueBackend::ids_named(const std::string& name)
{
    check_file();
    return m_queue.ids_named(name);
}

std::optional<std::int64_t> SqliteQueueBackend::latest_of(const std::string& user)
{
    check_file();
    return m_queue.latest_of(user);
}

std::vector<JobRecord> SqliteQueueBackend::newest(const JobsWanted& wanted)
{
    check_file();
    return newest_jobs(m_queue, wanted);
}

bool SqliteQueueBackend::wait_for_change(std::chrono::milliseconds most)
{
    // A follower asks about every job it waits for at each look: a worker committing
    // thousands of times a second wakes it at most every 20 ms.
    constexpr auto k_least_between_looks = std::chrono::milliseconds(20);
    if (!m_changes) {
        m_changes.emplace(m_path);
    }
    // Looked at every wait, besides the directory's watch: a removal or a rename over the
    // path is seen within one wait, wherever the watch could not be made.
    if (const auto now = database_file(m_path); now != m_file_watched) {
        m_file_watched = now;
        return true;
    }
    const auto began = std::chrono::steady_clock::now();
    if (m_changes->wait(most)) {
        std::this_thread::sleep_until(began + k_least_between_looks);
        return true;
    }
    return false;
}

bool SqliteQueueBackend::ask_worker_to_stop(const std::string& worker, bool now)
{
    check_file();
    const bool asked = m_queue.ask_to_stop(worker, now);
    if (asked) {
        wake_workers(m_path); // it stops now rather than at its next look
    }
    return asked;
}

std::vector<std::int64_t> SqliteQueueBackend::unended()
{
    check_file();
    return m_queue.unended();
}

CancelOutcome SqliteQueueBackend::cancel(std::int64_t id)
{
    check_file();
    const auto outcome = m_queue.cancel(id);
    if (outcome == CancelOutcome::stopping) {
        wake_workers(m_path); // its worker stops it now rather than at its next look
    }
    return outcome;
}

Result<void> SqliteQueueBackend::retry(std::int64_t id)
{
    check_file();
    auto queued = m_queue.retry(id);
    if (queued) {
        wake_workers(m_path);
    }
    return queued;
}

void SqliteQueueBackend::pause(const std::string& gpu)
{
    check_file();
    m_queue.pause(gpu);
    wake_workers(m_path);
}

void SqliteQueueBackend::resume(const std::string& gpu)
{
    check_file();
    m_queue.resume(gpu);
    wake_workers(m_path);
}

std::int64_t SqliteQueueBackend::purge(std::optional<double> ended_before)
{
    check_file();
    return purge_ended_jobs(m_queue, ended_before);
}

JobOutput SqliteQueueBackend::output(const JobRecord& job, std::uint64_t out_from,
                                     std::uint64_t err_from, std::uint64_t most)
{
    if (job.output.empty()) {
        return {};
    }
    const auto paths = sys::last_output_of(job.output, static_cast<JobId>(job.id));
    return {read_from(paths.out, out_from, most), read_from(paths.err, err_from, most), true};
}

QueueBackend::OutputSizes SqliteQueueBackend::output_sizes(const JobRecord& job)
{
    if (job.output.empty()) {
        return {};
    }
    const auto paths = sys::last_output_of(job.output, static_cast<JobId>(job.id));
    std::error_code error;
    const auto out = std::filesystem::file_size(paths.out, error);
    const auto out_size = error ? 0 : out;
    const auto err = std::filesystem::file_size(paths.err, error);
    return {out_size, error ? 0 : err};
}

} // namespace gpusched::queue
