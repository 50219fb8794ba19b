// The worker's side of the SQLite queue: its record, the take of a job and its end, a job
// given back, and the jobs of workers found gone returned to the front.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include "sqlite_job_rows.hpp"

#include <gpusched/job_request.hpp>
#include <gpusched/sys/output_files.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>

namespace gpusched::queue {

void SqliteQueue::add_worker(const WorkerRecord& worker)
{
    m_database.write([&] {
        m_database
            // Listed again (its GPUs now known): since when it serves, and a stop it was
            // asked for meanwhile, are kept.
            .prepare("INSERT INTO workers (id, queue, host, pid, gpus, since, user) "
                     "VALUES (?, ?, ?, ?, ?, ?, nullif(?, '')) "
                     "ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, "
                     "gpus = excluded.gpus, user = excluded.user")
            .bind(1, worker.id)
            .bind(2, m_name)
            .bind(3, worker.host)
            .bind(4, worker.pid)
            .bind(5, worker.gpus)
            .bind(6, worker.since)
            .bind(7, worker.user)
            .run();
    });
}

std::optional<bool> SqliteQueue::stop_asked(const std::string& worker)
{
    auto& query = m_database.prepare_kept("SELECT stop FROM workers WHERE id = ?");
    query.bind(1, worker);
    std::optional<bool> now;
    if (query.step() && !query.is_null(0)) {
        now = query.text(0) == "now";
    }
    query.reset();
    return now;
}

void SqliteQueue::remove_worker(const std::string& worker)
{
    m_database.write(
        [&] { m_database.prepare("DELETE FROM workers WHERE id = ?").bind(1, worker).run(); });
}

std::int64_t SqliteQueue::reclaim(const std::function<bool(const WorkerRecord&)>& alive)
{
    // Liveness is looked at before the transaction (it is a system call per worker, and the
    // write lock should be short); a worker found dead stays dead, so nothing is lost by it.
    // Workers listed, and those of running jobs (a worker may have left the list first).
    std::map<std::string, WorkerRecord> candidates;
    for (auto& worker : workers()) {
        candidates.emplace(worker.id, std::move(worker));
    }
    auto holders = m_database.prepare(
        "SELECT DISTINCT worker FROM jobs WHERE queue = ? AND state = 'running'");
    holders.bind(1, m_name);
    while (holders.step()) {
        auto id = holders.text(0);
        candidates.try_emplace(id, WorkerRecord{id, "", 0, "", 0});
    }
    holders.reset();
    std::vector<std::string> dead;
    for (const auto& [id, worker] : candidates) {
        if (!alive(worker)) {
            dead.push_back(id);
        }
    }
    if (dead.empty()) {
        return 0;
    }
    return m_database.write([&] {
        std::int64_t returned = 0;
        for (const auto& worker : dead) {
            // A job its submitter asked to cancel is cancelled rather than run again.
            auto cancelled = m_database.prepare(
                "UPDATE jobs SET state = 'cancelled', ended = ?, note = 'cancelled; its worker "
                "ended' WHERE worker = ? AND state = 'running' AND cancel != 0 RETURNING id");
            for (const auto id :
                 cancelled.bind(1, seconds_since_epoch()).bind(2, worker).integers()) {
                settle_waiting(id);
            }
            auto running = m_database.prepare(
                "SELECT id FROM jobs WHERE worker = ? AND state = 'running' ORDER BY id");
            const auto ids = running.bind(1, worker).integers();
            // Back to the front in the order they were taken, each noted as returned.
            for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
                to_front(*it, "returned = returned + 1, started = NULL, gpu = NULL");
                ++returned;
            }
            m_database.prepare("DELETE FROM workers WHERE id = ?").bind(1, worker).run();
        }
        return returned;
    });
}

namespace {

// gpusched_can_run(REQUEST, GPUS): can_ever_run for a batch's request (its encoding, or NULL
// for none) and a worker's GPU count, so that the take asks the one rule the scheduler, the
// Redis worker and `submit` ask. A request this version cannot read is taken, and refused
// with the reason (SqliteWorkerStore::take): never left queued for nobody.
void can_run_in_sql(sqlite3_context* context, int /*count*/, sqlite3_value** values)
{
    const auto* text = sqlite3_value_text(values[0]);
    const auto gpus = sqlite3_value_int64(values[1]);
    const auto request = decode_request(
        text ? std::string_view(reinterpret_cast<const char*>(text),
                                static_cast<std::size_t>(sqlite3_value_bytes(values[0])))
             : std::string_view());
    sqlite3_result_int(
        context,
        !request || (gpus > 0 && can_ever_run(*request, static_cast<std::size_t>(gpus), {})));
}

} // namespace

void define_take_rule(Database& database)
{
    const int defined =
        sqlite3_create_function_v2(database.handle(), "gpusched_can_run", 2,
                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, nullptr,
                                   can_run_in_sql, nullptr, nullptr, nullptr);
    if (defined != SQLITE_OK) {
        database.fail(defined, "defining the take's rule");
    }
}

std::optional<JobRecord> SqliteQueue::take(const std::string& worker, const std::string& output,
                                           std::optional<std::int64_t> gpus)
{
    // Nothing is taken while the whole queue is paused (a pause row with no GPU).
    static const auto any = fmt::format(
        "UPDATE jobs SET state = 'running', worker = ?1, output = nullif(?3, '') WHERE id = "
        "(SELECT id FROM jobs WHERE queue = ?2 AND state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM pauses WHERE queue = ?2 AND gpu = '') "
        "ORDER BY priority DESC, position LIMIT 1) RETURNING {}",
        k_taken_job_columns);
    // The same, passing by the jobs a worker with ?4 GPUs could never run (can_ever_run, as a
    // function of the connection: see define_take_rule): a look at each job's batch that the
    // common take does without.
    static const auto fitting = fmt::format(
        "UPDATE jobs SET state = 'running', worker = ?1, output = nullif(?3, '') WHERE id = "
        "(SELECT id FROM jobs WHERE queue = ?2 AND state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM pauses WHERE queue = ?2 AND gpu = '') AND "
        "gpusched_can_run((SELECT request FROM batches WHERE batches.id = jobs.batch), ?4) "
        "ORDER BY priority DESC, position LIMIT 1) RETURNING {}",
        k_taken_job_columns);
    return m_database.write([&]() -> std::optional<JobRecord> {
        auto& take = m_database.prepare_kept(gpus ? fitting : any);
        take.bind(1, worker).bind(2, m_name).bind(3, output);
        if (gpus) {
            take.bind(4, *gpus);
        }
        if (!take.step()) {
            take.reset();
            return std::nullopt;
        }
        auto job = read_job(take);
        take.run();
        // An earlier run of the job (its worker lost, its job given back or retried) may have
        // left files in this worker's directory: this run writes them anew from attempt 1, so a
        // later attempt of that run would be shown as this one's, and `logs --follow` seeing
        // this run start could read that run's bytes before this one's files are opened. They
        // are removed before the take is committed, and only from the worker's own directory.
        if (!output.empty()) {
            sys::remove_output_of(output, static_cast<JobId>(job.id));
        }
        return job;
    });
}

void SqliteQueue::untake(const std::string& worker, std::int64_t id)
{
    m_database.write([&] {
        m_database
            .prepare_kept("UPDATE jobs SET state = 'queued', worker = NULL, output = NULL WHERE id "
                          "= ? AND worker = ? AND state = 'running'")
            .bind(1, id)
            .bind(2, worker)
            .run();
    });
}

bool SqliteQueue::finish(const std::string& worker, const JobResult& result)
{
    return m_database.write([&] {
        m_database
            .prepare_kept(
                "UPDATE jobs SET state = ?, gpu = ?, started = ?, runtime = ?, ended = ?, "
                "exit_code = ?, signal = ?, note = nullif(?, ''), peak_memory = nullif(?, 0), "
                "memory_reruns = nullif(?, 0) WHERE id = ? AND worker = ? AND state = 'running'")
            .bind(1, to_string(result.state))
            .bind(2, result.gpu)
            .bind(3, result.started)
            .bind(4, result.runtime)
            .bind(5, seconds_since_epoch())
            .bind(6, static_cast<std::int64_t>(result.exit_code))
            .bind(7, static_cast<std::int64_t>(result.signal))
            .bind(8, result.note)
            .bind(9, static_cast<std::int64_t>(
                         std::min<std::uint64_t>(result.peak_memory, k_most_job_memory)))
            .bind(10, static_cast<std::int64_t>(result.memory_reruns))
            .bind(11, result.id)
            .bind(12, worker)
            .run();
        if (m_database.changes() != 1) {
            return false;
        }
        settle_waiting(result.id);
        return true;
    });
}

void SqliteQueue::note_start(const std::string& worker, std::int64_t id, const std::string& gpu,
                             double started)
{
    m_database.write([&] {
        m_database
            .prepare_kept("UPDATE jobs SET gpu = ?, started = ? WHERE id = ? AND worker = ? "
                          "AND state = 'running'")
            .bind(1, gpu)
            .bind(2, started)
            .bind(3, id)
            .bind(4, worker)
            .run();
    });
}

bool SqliteQueue::give_back(const std::string& worker, std::int64_t id)
{
    return m_database.write([&] {
        auto mine = m_database.prepare(
            "SELECT cancel FROM jobs WHERE id = ? AND worker = ? AND state = 'running'");
        if (!mine.bind(1, id).bind(2, worker).step()) {
            mine.reset();
            return false;
        }
        const bool cancelled = mine.integer(0) != 0;
        mine.reset();
        if (cancelled) {
            // Asked to stop anyway: it ends here rather than run again.
            m_database
                .prepare("UPDATE jobs SET state = 'cancelled', ended = ?, note = 'cancelled "
                         "while its worker stopped' WHERE id = ?")
                .bind(1, seconds_since_epoch())
                .bind(2, id)
                .run();
            settle_waiting(id);
        } else {
            // As when its worker is lost: back unfinished, counted if it had started, and
            // nothing of that start left to list.
            to_front(id, "returned = returned + (started IS NOT NULL), started = NULL, gpu = NULL");
        }
        return true;
    });
}

void SqliteQueue::to_front(std::int64_t id, std::string_view also_set)
{
    m_database.prepare("INSERT OR IGNORE INTO queues (name) VALUES (?)").bind(1, m_name).run();
    m_database
        .prepare(fmt::format("UPDATE jobs SET state = 'queued', worker = NULL{}{}, position = "
                             "(SELECT next_front FROM queues WHERE name = ?) WHERE id = ?",
                             also_set.empty() ? "" : ", ", also_set))
        .bind(1, m_name)
        .bind(2, id)
        .run();
    m_database.prepare("UPDATE queues SET next_front = next_front - 1 WHERE name = ?")
        .bind(1, m_name)
        .run();
}

std::vector<std::int64_t> SqliteQueue::cancel_requests(const std::string& worker)
{
    auto query = m_database.prepare(
        "SELECT id FROM jobs WHERE worker = ? AND state = 'running' AND cancel != 0");
    return query.bind(1, worker).integers();
}

} // namespace gpusched::queue
