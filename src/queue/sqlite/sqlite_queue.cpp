// The SQLite queue (its schema: sqlite_schema.cpp): submission, a batch and its jobs, and the
// jobs that wait for others settled as those end. The take and finish, the verbs and the
// listings are in sqlite_queue_take.cpp, sqlite_queue_verbs.cpp and sqlite_queue_listings.cpp.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include "sqlite_job_rows.hpp"

#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace gpusched::queue {
namespace {

// The positions a --front submission reserves ahead of the queue: more jobs than one
// submission holds, few enough that 2^31 submissions fit in the positions' 64 bits.
constexpr std::int64_t k_front_block = std::int64_t{1} << 32;

} // namespace

SqliteQueue::SqliteQueue(Database& database, std::string name)
    : m_database(database), m_name(std::move(name))
{
    define_take_rule(m_database);
}

std::int64_t SqliteQueue::new_batch(const BatchOrigin* origin,
                                    const std::vector<JobDependency>& after)
{
    return m_database.write([&] {
        for (const auto& dependency : after) {
            auto known = m_database.prepare("SELECT 1 FROM jobs WHERE id = ? AND queue = ?");
            if (!known.bind(1, dependency.id).bind(2, m_name).step()) {
                throw std::invalid_argument(fmt::format("--after{} {}: no job {} in queue {}",
                                                        dependency.ok ? "-ok" : "", dependency.id,
                                                        dependency.id, m_name));
            }
        }
        auto insert = m_database.prepare(
            "INSERT INTO batches (queue, made, directory, environment, umask, uid, user, request, "
            "name) VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, ''), nullif(?, ''))");
        insert.bind(1, m_name).bind(2, seconds_since_epoch());
        for (int column = 3; column <= 9; ++column) {
            insert.bind_null(column);
        }
        if (origin != nullptr) {
            insert.bind(3, origin->context.directory)
                .bind(4, encode_environment(origin->context.environment))
                .bind(5, static_cast<std::int64_t>(origin->context.umask))
                .bind(6, origin->submitter.uid)
                .bind(7, origin->submitter.user)
                .bind(8, encode_request(origin->context.request))
                .bind(9, origin->name);
        }
        insert.run();
        const auto batch = m_database.last_insert_id();
        auto wait = m_database.prepare(
            "INSERT INTO waits (batch, after, ok) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET ok = "
            "max(ok, excluded.ok)");
        for (const auto& dependency : after) {
            wait.bind(1, batch).bind(2, dependency.id).bind(3, std::int64_t{dependency.ok}).run();
        }
        return batch;
    });
}

SqliteQueue::StartState SqliteQueue::start_state(std::int64_t batch)
{
    // A job that is gone (purged) has ended and is waited for no more.
    auto& waits = m_database.prepare_kept(
        "SELECT waits.after, waits.ok, jobs.state FROM waits JOIN jobs ON jobs.id = waits.after "
        "WHERE waits.batch = ?");
    waits.bind(1, batch);
    StartState start;
    while (waits.step()) {
        const auto state = state_of(waits.text(2));
        if (!has_ended(state)) {
            start.state = JobState::waiting;
        } else if (waits.integer(1) != 0 && state != JobState::succeeded) {
            start.state = JobState::skipped;
            start.why = fmt::format(
                "job {} {}", waits.integer(0),
                state == JobState::failed ? "failed" : "was " + std::string(to_string(state)));
            start.note = "skipped: " + start.why;
            break;
        }
    }
    waits.reset();
    return start;
}

void SqliteQueue::settle_waiting(std::int64_t ended)
{
    // A job's end may end others (skipped), whose ends may end more: each is settled in turn.
    std::vector<std::int64_t> to_settle{ended};
    while (!to_settle.empty()) {
        const auto id = to_settle.back();
        to_settle.pop_back();
        auto& waiting = m_database.prepare_kept("SELECT batch FROM waits WHERE after = ?");
        const auto batches = waiting.bind(1, id).integers();
        for (const auto batch : batches) {
            const auto start = start_state(batch);
            if (start.state == JobState::queued) {
                m_database
                    .prepare_kept(
                        "UPDATE jobs SET state = 'queued' WHERE batch = ? AND state = 'waiting'")
                    .bind(1, batch)
                    .run();
            } else if (start.state == JobState::skipped) {
                auto& skip = m_database.prepare_kept(
                    "UPDATE jobs SET state = 'skipped', ended = ?, note = ? WHERE batch = ? AND "
                    "state = 'waiting' RETURNING id");
                const auto skipped = skip.bind(1, seconds_since_epoch())
                                         .bind(2, start.note)
                                         .bind(3, batch)
                                         .integers();
                to_settle.insert(to_settle.end(), skipped.begin(), skipped.end());
            }
        }
    }
}

std::optional<BatchOrigin> SqliteQueue::batch_origin(std::int64_t batch)
{
    // A batch with no directory but a user is a row nobody but a submitter of schema 3 or
    // later writes: its user is still checked.
    auto query = m_database.prepare(
        "SELECT coalesce(directory, ''), environment, coalesce(umask, 18), uid, "
        "coalesce(user, ''), coalesce(request, ''), coalesce(name, '') FROM batches WHERE id = ? "
        "AND (directory IS NOT NULL OR uid IS NOT NULL)");
    query.bind(1, batch);
    if (!query.step()) {
        query.reset();
        return std::nullopt;
    }
    BatchOrigin origin;
    origin.context.directory = query.text(0);
    origin.context.environment = decode_environment(query.text(1));
    origin.context.umask = static_cast<unsigned>(query.integer(2)) & 0777U;
    origin.submitter.uid = query.is_null(3) ? -1 : query.integer(3);
    origin.submitter.user = query.text(4);
    auto request = decode_request(query.text(5));
    if (request) {
        origin.context.request = std::move(*request);
    } else {
        origin.unreadable = request.message();
    }
    origin.name = query.text(6);
    query.reset();
    return origin;
}

SqliteQueue::Submitted SqliteQueue::submit(const std::vector<NewSqliteJob>& jobs,
                                         SubmitOrder order)
{
    Submitted submitted;
    submitted.batch = new_batch(order.origin, order.after);
    submitted.ids = submit_to(submitted.batch, jobs, order);
    return submitted;
}

std::vector<std::int64_t> SqliteQueue::submit_to(std::int64_t batch,
                                                const std::vector<NewSqliteJob>& jobs,
                                                SubmitOrder& order)
{
    return m_database.write([&] {
        m_database.prepare("INSERT OR IGNORE INTO queues (name) VALUES (?)").bind(1, m_name).run();
        auto counters =
            m_database.prepare("SELECT next_back, next_front FROM queues WHERE name = ?");
        counters.bind(1, m_name).step();
        std::int64_t back = counters.integer(0);
        std::int64_t front = counters.integer(1);
        counters.reset();
        // Jobs sent to the front keep their own order, the first of them first, however many
        // chunks they come in: the first chunk reserves a block of positions ahead of the
        // queue, and each chunk after it follows the one before within the block.
        const auto count = static_cast<std::int64_t>(jobs.size());
        if (order.front && !order.front_next) {
            order.front_next = front - k_front_block + 1;
            front -= k_front_block;
        }
        std::int64_t position = order.front ? *order.front_next : back;
        const double now = seconds_since_epoch();
        // Looked at with each chunk: a job waited for may have ended since the last.
        const auto start = start_state(batch);
        auto insert = m_database.prepare(
            "INSERT INTO jobs (queue, batch, command, priority, position, submitted, state, "
            "ended, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''))");

        std::vector<std::int64_t> ids;
        ids.reserve(jobs.size());
        for (const auto& job : jobs) {
            insert.bind(1, m_name)
                .bind(2, batch)
                .bind(3, job.command)
                .bind(4, order.priority)
                .bind(5, position++)
                .bind(6, now)
                .bind(7, to_string(start.state))
                .bind(9, start.note);
            if (start.state == JobState::skipped) {
                insert.bind(8, now);
            } else {
                insert.bind_null(8);
            }
            insert.run();
            ids.push_back(m_database.last_insert_id());
        }
        if (order.front) {
            *order.front_next += count;
        } else {
            back += count;
        }
        m_database.prepare("UPDATE queues SET next_back = ?, next_front = ? WHERE name = ?")
            .bind(1, back)
            .bind(2, front)
            .bind(3, m_name)
            .run();
        return ids;
    });
}

} // namespace gpusched::queue
