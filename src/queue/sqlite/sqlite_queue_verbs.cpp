// What a user does to the SQLite queue: cancel, retry, pause and resume, purge, and ask a
// worker to stop.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include "sqlite_job_rows.hpp"

#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>

namespace gpusched::queue {

bool SqliteQueue::ask_to_stop(const std::string& worker, bool now)
{
    return m_database.write([&] {
        // A stop now is not taken back by a later drain.
        m_database
            .prepare("UPDATE workers SET stop = ? WHERE id = ? AND queue = ? AND "
                     "coalesce(stop, '') <> 'now'")
            .bind(1, now ? "now" : "drain")
            .bind(2, worker)
            .bind(3, m_name)
            .run();
        auto known = m_database.prepare("SELECT 1 FROM workers WHERE id = ? AND queue = ?");
        return known.bind(1, worker).bind(2, m_name).step();
    });
}

CancelOutcome SqliteQueue::cancel(std::int64_t id)
{
    return m_database.write([&] {
        auto state = m_database.prepare("SELECT state FROM jobs WHERE id = ? AND queue = ?");
        if (!state.bind(1, id).bind(2, m_name).step()) {
            state.reset();
            return CancelOutcome::unknown;
        }
        const auto found = state_of(state.text(0));
        state.reset();
        if (found == JobState::queued || found == JobState::waiting) {
            m_database
                .prepare("UPDATE jobs SET state = 'cancelled', ended = ?, note = 'cancelled "
                         "before it started' WHERE id = ?")
                .bind(1, seconds_since_epoch())
                .bind(2, id)
                .run();
            settle_waiting(id);
            return CancelOutcome::removed;
        }
        if (found == JobState::running) {
            m_database.prepare("UPDATE jobs SET cancel = 1 WHERE id = ?").bind(1, id).run();
            return CancelOutcome::stopping;
        }
        return CancelOutcome::already_ended;
    });
}

Result<void> SqliteQueue::retry(std::int64_t id)
{
    return m_database.write([&]() -> Result<void> {
        auto state = m_database.prepare("SELECT state FROM jobs WHERE id = ? AND queue = ?");
        if (!state.bind(1, id).bind(2, m_name).step()) {
            state.reset();
            return Failure{FailureKind::not_found,
                           fmt::format("no job {} in queue {}", id, m_name)};
        }
        const auto found = state_of(state.text(0));
        state.reset();
        if (!has_ended(found)) {
            return Failure{FailureKind::bad_request,
                           fmt::format("job {} is {}: only an ended job can be queued again", id,
                                       to_string(found))};
        }
        if (found == JobState::succeeded) {
            return Failure{
                FailureKind::bad_request,
                fmt::format("job {} succeeded: submit its command again to run it again", id)};
        }
        // Queued again as its batch would be now: waiting while what it waits for runs.
        auto batch = m_database.prepare("SELECT batch FROM jobs WHERE id = ?");
        batch.bind(1, id).step();
        const auto start = start_state(batch.integer(0));
        batch.reset();
        if (start.state == JobState::skipped) {
            return Failure{FailureKind::bad_request,
                           fmt::format("job {} would be skipped again ({}): retry that job first",
                                       id, start.why)};
        }
        m_database.prepare("INSERT OR IGNORE INTO queues (name) VALUES (?)").bind(1, m_name).run();
        m_database
            .prepare("UPDATE jobs SET state = ?, worker = NULL, gpu = NULL, started = NULL, "
                     "ended = NULL, runtime = NULL, exit_code = NULL, signal = NULL, note = NULL, "
                     "peak_memory = NULL, memory_reruns = NULL, "
                     "cancel = 0, position = (SELECT next_back FROM queues WHERE name = ?) "
                     "WHERE id = ?")
            .bind(1, to_string(start.state))
            .bind(2, m_name)
            .bind(3, id)
            .run();
        m_database.prepare("UPDATE queues SET next_back = next_back + 1 WHERE name = ?")
            .bind(1, m_name)
            .run();
        return {};
    });
}

void SqliteQueue::pause(const std::string& gpu)
{
    m_database.write([&] {
        m_database.prepare("INSERT OR IGNORE INTO pauses (queue, gpu) VALUES (?, ?)")
            .bind(1, m_name)
            .bind(2, gpu)
            .run();
    });
}

void SqliteQueue::resume(const std::string& gpu)
{
    m_database.write([&] {
        if (gpu.empty()) {
            m_database.prepare("DELETE FROM pauses WHERE queue = ?").bind(1, m_name).run();
        } else {
            m_database.prepare("DELETE FROM pauses WHERE queue = ? AND gpu = ?")
                .bind(1, m_name)
                .bind(2, gpu)
                .run();
        }
    });
}

void SqliteQueue::forget_empty_batches()
{
    // A batch keeps its submitter's whole environment: once no job of it is left, it goes,
    // with what it waited for. Not before a week, the time ended jobs are kept: a submission
    // still reading its input adds its next chunk to the batch it made.
    constexpr double k_kept = 7 * 24 * 3600;
    const std::string empty =
        "SELECT id FROM batches WHERE queue = ?1 AND made < ?2 AND NOT EXISTS (SELECT 1 FROM "
        "jobs WHERE jobs.batch = batches.id)";
    const double before = seconds_since_epoch() - k_kept;
    m_database.prepare(fmt::format("DELETE FROM waits WHERE batch IN ({})", empty))
        .bind(1, m_name)
        .bind(2, before)
        .run();
    m_database.prepare(fmt::format("DELETE FROM batches WHERE id IN ({})", empty))
        .bind(1, m_name)
        .bind(2, before)
        .run();
}

std::vector<PurgedJob> SqliteQueue::purge(std::optional<double> before)
{
    return m_database.write([&] {
        auto purge =
            m_database.prepare("DELETE FROM jobs WHERE queue = ? AND ended IS NOT NULL AND "
                               "state NOT IN ('queued', 'running', 'waiting') AND ended < ? "
                               "RETURNING id, coalesce(output, '')");
        purge.bind(1, m_name).bind(2, before.value_or(seconds_since_epoch() + 1));
        std::vector<PurgedJob> purged;
        while (purge.step()) {
            purged.push_back({purge.integer(0), purge.text(1)});
        }
        purge.reset();
        forget_empty_batches();
        return purged;
    });
}

} // namespace gpusched::queue
