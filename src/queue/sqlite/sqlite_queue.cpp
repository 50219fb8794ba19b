#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>

namespace gpusched::queue {
namespace {

// The positions a --front submission reserves ahead of the queue: more jobs than one
// submission holds, few enough that 2^31 submissions fit in the positions' 64 bits.
constexpr std::int64_t k_front_block = std::int64_t{1} << 32;

// The version of the tables below, kept in the database header (PRAGMA user_version) and in
// meta; a database made by a later version is not touched.
// 1: the tables below but jobs.output. 2: jobs.output, the directory a job's output files
// are in. 3: who submitted each batch, from where and with what (batches.directory, ...), and
// whose each worker is (workers.user). 4: what each batch's jobs ask of their worker
// (batches.gpus, timeout_ms, retries), its label (batches.name), how a worker was asked to
// stop (workers.stop), and the jobs it waits for
// (waits; a job waiting for them is in state 'waiting', one whose wait failed 'skipped').
// 5: the same tables, in files their owner alone can read: earlier versions made them with
// the umask's mode, most often readable by every user, though a batch keeps its submitter's
// environment (API keys and tokens among it); the upgrade takes the others' bits away once.
constexpr int k_schema_version = 5;

// A batch is one submission: its jobs run in its directory, with its environment (NAME=VALUE
// entries each ended by a NUL byte) and umask, as its user (uid and name); all NULL in a
// batch queued before schema 3, whose jobs run as the worker does.
const std::string_view k_batch_columns_of_schema_3[] = {
    "directory TEXT", "environment BLOB", "umask INTEGER", "uid INTEGER", "user TEXT"};
// What a batch's jobs ask of the worker that runs them (NULL: the worker's own option), and the
// label they are known by.
const std::string_view k_batch_columns_of_schema_4[] = {"gpus INTEGER", "timeout_ms INTEGER",
                                                        "retries INTEGER", "name TEXT"};

// Every queue of the database shares these tables, told apart by the `queue` column. A job's
// order is (priority descending, position ascending): positions come from the queue's two
// counters, one counting up for the back and one counting down for the front, so neither end
// needs a scan to add to it. The partial indexes keep taking the next job and listing the
// running ones as cheap with 100,000 jobs queued as with one.
constexpr std::string_view k_schema = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queues (
    name TEXT PRIMARY KEY,
    next_back INTEGER NOT NULL DEFAULT 1,
    next_front INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS batches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    made REAL NOT NULL,
    directory TEXT,
    environment BLOB,
    umask INTEGER,
    uid INTEGER,
    user TEXT,
    gpus INTEGER,
    timeout_ms INTEGER,
    retries INTEGER,
    name TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    batch INTEGER NOT NULL,
    command TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    position INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    worker TEXT,
    gpu TEXT,
    submitted REAL NOT NULL,
    started REAL,
    ended REAL,
    runtime REAL,
    exit_code INTEGER,
    signal INTEGER,
    note TEXT,
    returned INTEGER NOT NULL DEFAULT 0,
    cancel INTEGER NOT NULL DEFAULT 0,
    output TEXT
);
CREATE INDEX IF NOT EXISTS jobs_queued ON jobs (queue, priority DESC, position)
    WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS jobs_running ON jobs (worker) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS jobs_of_batch ON jobs (batch);
CREATE INDEX IF NOT EXISTS jobs_ended ON jobs (queue, ended) WHERE ended IS NOT NULL;
CREATE TABLE IF NOT EXISTS workers (
    id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    gpus TEXT NOT NULL,
    since REAL NOT NULL,
    user TEXT,
    stop TEXT
);
CREATE TABLE IF NOT EXISTS waits (
    batch INTEGER NOT NULL,
    after INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    PRIMARY KEY (batch, after)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS waits_after ON waits (after);
CREATE TABLE IF NOT EXISTS pauses (
    queue TEXT NOT NULL,
    gpu TEXT NOT NULL,
    PRIMARY KEY (queue, gpu)
);
)";

JobState state_of(const std::string& name)
{
    return job_state_named(name).value_or(JobState::failed);
}

// A job's own columns (what a worker's take returns: it reads its batch's origin once per
// batch), then, for listings, those of its batch: its directory, uid and user.
constexpr std::string_view k_taken_job_columns =
    "id, queue, command, batch, priority, state, coalesce(worker, ''), coalesce(gpu, ''), "
    "submitted, coalesce(started, 0), coalesce(runtime, 0), coalesce(exit_code, 0), "
    "coalesce(signal, 0), coalesce(note, ''), returned, cancel, coalesce(ended, 0), "
    "coalesce(output, '')";
const std::string k_job_columns =
    std::string(k_taken_job_columns) +
    ", (SELECT coalesce(directory, '') || char(0) || coalesce(uid, -1) || char(0) || "
    "coalesce(user, '') || char(0) || coalesce(name, '') FROM batches WHERE batches.id = "
    "jobs.batch)";
constexpr int k_origin_column = 18;

// The batch's part of a job's columns: directory, uid, user and name, joined by NUL bytes
// (one look-up of the batch, not four).
void read_origin(const std::string& joined, JobRecord& job)
{
    const auto first = joined.find('\0');
    const auto second = joined.find('\0', first == std::string::npos ? first : first + 1);
    const auto third = joined.find('\0', second == std::string::npos ? second : second + 1);
    if (third == std::string::npos) {
        return;
    }
    job.directory = joined.substr(0, first);
    job.submitter.uid = std::strtoll(joined.c_str() + first + 1, nullptr, 10);
    job.submitter.user = joined.substr(second + 1, third - second - 1);
    job.name = joined.substr(third + 1);
}

JobRecord read_job(const Statement& row)
{
    JobRecord job;
    job.id = row.integer(0);
    job.queue = row.text(1);
    job.command = row.text(2);
    job.batch = row.integer(3);
    job.priority = row.integer(4);
    job.state = state_of(row.text(5));
    job.worker = row.text(6);
    job.gpu = row.text(7);
    job.submitted = row.real(8);
    job.started = row.real(9);
    job.runtime = row.real(10);
    job.exit_code = static_cast<int>(row.integer(11));
    job.signal = static_cast<int>(row.integer(12));
    job.note = row.text(13);
    job.returned = row.integer(14);
    job.cancel_requested = row.integer(15) != 0;
    job.ended = row.real(16);
    job.output = row.text(17);
    if (row.columns() > k_origin_column) {
        read_origin(row.text(k_origin_column), job);
    }
    return job;
}

std::vector<JobRecord> read_jobs(Statement& query)
{
    std::vector<JobRecord> jobs;
    while (query.step()) {
        jobs.push_back(read_job(query));
    }
    query.reset();
    return jobs;
}

// The schema's version, kept in the database header (PRAGMA user_version): read without
// touching a table. 0 for a new database, and for one made before the version was kept there
// (its version is then in meta).
int header_version(Database& database)
{
    auto version = database.prepare("PRAGMA user_version");
    const int found = version.step() ? static_cast<int>(version.integer(0)) : 0;
    version.reset();
    return found;
}

DatabaseError made_by_a_later_version(Database& database, const std::string& found)
{
    return DatabaseError(fmt::format("database {}: made by another version of gpusched (schema "
                                     "{}, this one reads {})",
                                     database.path().string(), found, k_schema_version),
                         0);
}

// Makes the tables of a new database, or brings one made before the header kept the
// version up to date (schema 1: no jobs.output).
void make_or_upgrade(Database& database)
{
    database.execute(k_schema);
    auto legacy = database.prepare("SELECT value FROM meta WHERE key = 'schema'");
    std::optional<std::string> found;
    if (legacy.step()) {
        found = legacy.text(0);
    }
    legacy.reset();
    if (found && found != "1" && found != "2" && found != "3" && found != "4" &&
        found != std::to_string(k_schema_version)) {
        throw made_by_a_later_version(database, *found);
    }
    if (found == "1") {
        database.execute("ALTER TABLE jobs ADD COLUMN output TEXT");
    }
    if (found == "1" || found == "2") {
        for (const auto column : k_batch_columns_of_schema_3) {
            database.execute(fmt::format("ALTER TABLE batches ADD COLUMN {}", column));
        }
        database.execute("ALTER TABLE workers ADD COLUMN user TEXT");
    }
    if (found == "1" || found == "2" || found == "3") {
        for (const auto column : k_batch_columns_of_schema_4) {
            database.execute(fmt::format("ALTER TABLE batches ADD COLUMN {}", column));
        }
        database.execute("ALTER TABLE workers ADD COLUMN stop TEXT");
    }
    if (found && found != std::to_string(k_schema_version)) {
        database.make_private();
    }
    // On the columns an upgrade adds: made once they are there.
    database.execute(
        "CREATE INDEX IF NOT EXISTS batches_named ON batches (queue, name) WHERE name IS NOT NULL");
    // meta keeps the version too, for the versions of gpusched that read it there.
    database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)")
        .bind(1, std::to_string(k_schema_version))
        .run();
    database.execute(fmt::format("PRAGMA user_version = {}", k_schema_version));
}

} // namespace

void prepare_sqlite_queue_schema(Database& database)
{
    // True when the tables are those of this version; a later version's are not touched.
    const auto current = [&database](int version) {
        if (version > k_schema_version) {
            throw made_by_a_later_version(database, std::to_string(version));
        }
        return version == k_schema_version;
    };
    // Most opens find the schema made: a read then, which never waits for a writer (a
    // listing works while another process holds the write lock).
    try {
        if (current(database.read([&] { return header_version(database); }))) {
            return;
        }
    } catch (const DatabaseError& error) {
        if (!error.busy()) {
            throw;
        }
        // Readers turned away without waiting (a WAL file being recovered after a crash):
        // the write lock is waited for below.
    }
    try {
        database.write([&] {
            // Looked at again under the write lock: another process may have made it meanwhile.
            if (!current(header_version(database))) {
                make_or_upgrade(database);
            }
        });
    } catch (const DatabaseError& error) {
        if ((error.code() & 0xff) != SQLITE_READONLY) {
            throw;
        }
        // Another user's queue, which we may read: its tables are theirs to bring up to date.
        throw DatabaseError(fmt::format("database {}: made by an earlier version of gpusched "
                                        "(schema {}), and not yours to bring up to date: its "
                                        "owner's next gpusched command there does",
                                        database.path().string(),
                                        database.read([&] { return header_version(database); })),
                            error.code());
    }
}

SqliteQueue::SqliteQueue(Database& database, std::string name)
    : m_database(database), m_name(std::move(name))
{
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
            "INSERT INTO batches (queue, made, directory, environment, umask, uid, user, gpus, "
            "timeout_ms, retries, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''))");
        insert.bind(1, m_name).bind(2, seconds_since_epoch());
        for (int column = 3; column <= 11; ++column) {
            insert.bind_null(column);
        }
        if (origin != nullptr) {
            const auto& options = origin->context.request;
            insert.bind(3, origin->context.directory)
                .bind(4, encode_environment(origin->context.environment))
                .bind(5, static_cast<std::int64_t>(origin->context.umask))
                .bind(6, origin->submitter.uid)
                .bind(7, origin->submitter.user)
                .bind(11, origin->name);
            if (options.gpus) {
                insert.bind(8, static_cast<std::int64_t>(*options.gpus));
            }
            if (options.timeout) {
                insert.bind(9, static_cast<std::int64_t>(options.timeout->count()));
            }
            if (options.retries) {
                insert.bind(10, static_cast<std::int64_t>(*options.retries));
            }
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
        "coalesce(user, ''), gpus, timeout_ms, retries, coalesce(name, '') FROM batches WHERE id = "
        "? AND (directory IS NOT NULL OR uid IS NOT NULL)");
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
    auto& options = origin.context.request;
    if (!query.is_null(5) && query.integer(5) > 0) {
        options.gpus = static_cast<std::size_t>(query.integer(5));
    }
    if (!query.is_null(6) && query.integer(6) > 0) {
        options.timeout = std::chrono::milliseconds(query.integer(6));
    }
    if (!query.is_null(7) && query.integer(7) >= 0) {
        options.retries = static_cast<unsigned>(query.integer(7));
    }
    origin.name = query.text(8);
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
    m_database.write([&] {
        m_database.prepare("DELETE FROM workers WHERE id = ?").bind(1, worker).run();
    });
}

std::vector<WorkerRecord> SqliteQueue::workers()
{
    auto query = m_database.prepare(
        "SELECT id, host, pid, gpus, since, coalesce(user, '') FROM workers WHERE queue = ? "
        "ORDER BY since");
    query.bind(1, m_name);
    std::vector<WorkerRecord> workers;
    while (query.step()) {
        workers.push_back({query.text(0), query.text(1), query.integer(2), query.text(3),
                           query.real(4), query.text(5)});
    }
    query.reset();
    return workers;
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
    // The same, passing by the jobs that ask for more than ?4 GPUs: a look at each job's batch
    // that the common take does without.
    static const auto fitting = fmt::format(
        "UPDATE jobs SET state = 'running', worker = ?1, output = nullif(?3, '') WHERE id = "
        "(SELECT id FROM jobs WHERE queue = ?2 AND state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM pauses WHERE queue = ?2 AND gpu = '') AND "
        "coalesce((SELECT gpus FROM batches WHERE batches.id = jobs.batch), 0) <= ?4 "
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
                "exit_code = ?, signal = ?, note = nullif(?, '') "
                "WHERE id = ? AND worker = ? AND state = 'running'")
            .bind(1, to_string(result.state))
            .bind(2, result.gpu)
            .bind(3, result.started)
            .bind(4, result.runtime)
            .bind(5, seconds_since_epoch())
            .bind(6, static_cast<std::int64_t>(result.exit_code))
            .bind(7, static_cast<std::int64_t>(result.signal))
            .bind(8, result.note)
            .bind(9, result.id)
            .bind(10, worker)
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
            return Failure{fmt::format("no job {} in queue {}", id, m_name)};
        }
        const auto found = state_of(state.text(0));
        state.reset();
        if (!has_ended(found)) {
            return Failure{fmt::format("job {} is {}: only an ended job can be queued again", id,
                                       to_string(found))};
        }
        if (found == JobState::succeeded) {
            return Failure{
                fmt::format("job {} succeeded: submit its command again to run it again", id)};
        }
        // Queued again as its batch would be now: waiting while what it waits for runs.
        auto batch = m_database.prepare("SELECT batch FROM jobs WHERE id = ?");
        batch.bind(1, id).step();
        const auto start = start_state(batch.integer(0));
        batch.reset();
        if (start.state == JobState::skipped) {
            return Failure{fmt::format("job {} would be skipped again ({}): retry that job first",
                                       id, start.why)};
        }
        m_database.prepare("INSERT OR IGNORE INTO queues (name) VALUES (?)").bind(1, m_name).run();
        m_database
            .prepare("UPDATE jobs SET state = ?, worker = NULL, gpu = NULL, started = NULL, "
                     "ended = NULL, runtime = NULL, exit_code = NULL, signal = NULL, note = NULL, "
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

std::set<std::string> SqliteQueue::paused()
{
    auto query = m_database.prepare("SELECT gpu FROM pauses WHERE queue = ?");
    query.bind(1, m_name);
    std::set<std::string> gpus;
    while (query.step()) {
        gpus.insert(query.text(0));
    }
    query.reset();
    return gpus;
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

std::optional<JobRecord> SqliteQueue::job(std::int64_t id)
{
    auto query =
        m_database.prepare(fmt::format("SELECT {} FROM jobs WHERE id = ? AND queue = ?",
                                       k_job_columns));
    query.bind(1, id).bind(2, m_name);
    auto jobs = read_jobs(query);
    if (jobs.empty()) {
        return std::nullopt;
    }
    return std::move(jobs.front());
}

std::vector<JobDependency> SqliteQueue::dependencies_of(std::int64_t batch)
{
    auto query = m_database.prepare("SELECT after, ok FROM waits WHERE batch = ? ORDER BY after");
    query.bind(1, batch);
    std::vector<JobDependency> after;
    while (query.step()) {
        after.push_back({query.integer(0), query.integer(1) != 0});
    }
    query.reset();
    return after;
}

std::vector<std::int64_t> SqliteQueue::ids_named(const std::string& name)
{
    auto query = m_database.prepare(
        "SELECT jobs.id FROM batches JOIN jobs ON jobs.batch = batches.id WHERE batches.queue = ? "
        "AND batches.name = ? ORDER BY jobs.id");
    return query.bind(1, m_name).bind(2, name).integers();
}

std::optional<std::int64_t> SqliteQueue::latest_of(const std::string& user)
{
    auto query = m_database.prepare(
        "SELECT max(jobs.id) FROM batches JOIN jobs ON jobs.batch = batches.id WHERE "
        "batches.queue = ? AND (batches.user = ? OR batches.user IS NULL)");
    query.bind(1, m_name).bind(2, user);
    std::optional<std::int64_t> latest;
    if (query.step() && !query.is_null(0)) {
        latest = query.integer(0);
    }
    query.reset();
    return latest;
}

std::vector<std::int64_t> SqliteQueue::unended()
{
    auto query = m_database.prepare(
        "SELECT id FROM jobs WHERE queue = ? AND state IN ('queued', 'running', 'waiting') ORDER "
        "BY id");
    return query.bind(1, m_name).integers();
}

std::vector<JobRecord> SqliteQueue::jobs_of(const std::vector<std::int64_t>& ids)
{
    std::vector<JobRecord> jobs;
    auto query =
        m_database.prepare(fmt::format("SELECT {} FROM jobs WHERE id = ? AND queue = ?",
                                       k_job_columns));
    for (const auto id : ids) {
        query.bind(1, id).bind(2, m_name);
        auto found = read_jobs(query);
        jobs.insert(jobs.end(), found.begin(), found.end());
    }
    // What a waiting job waits for, as a listing and a Redis queue tell it.
    for (auto& job : jobs) {
        if (job.state == JobState::waiting) {
            job.after = dependencies_of(job.batch);
        }
    }
    return jobs;
}

std::vector<JobRecord> SqliteQueue::batch_ended_since(std::int64_t batch, double since)
{
    // Through jobs_ended (`+batch` keeps the planner off jobs_of_batch): the few jobs of the
    // queue that ended since, not every job of the batch.
    auto& ended = m_database.prepare_kept(fmt::format(
        "SELECT {} FROM jobs WHERE queue = ? AND ended >= ? AND +batch = ? ORDER BY ended",
        k_job_columns));
    ended.bind(1, m_name).bind(2, since).bind(3, batch);
    return read_jobs(ended);
}

SqliteQueue::BatchProgress SqliteQueue::batch_progress(std::int64_t batch)
{
    BatchProgress progress;
    m_database.read([&] {
        auto ended = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE batch = ? AND state NOT IN ('queued', 'running', "
            "'waiting') ORDER BY ended",
            k_job_columns));
        ended.bind(1, batch);
        progress.ended = read_jobs(ended);
        auto unended = m_database.prepare(
            "SELECT count(*) FROM jobs WHERE batch = ? AND state IN ('queued', 'running', "
            "'waiting')");
        unended.bind(1, batch).step();
        progress.unended = unended.integer(0);
        unended.reset();
    });
    return progress;
}

QueueListing SqliteQueue::list(std::size_t queued_shown, std::size_t recent_shown,
                               std::size_t queued_from)
{
    QueueListing listing;
    // One read transaction: the counts and the lists agree with each other.
    m_database.read([&] {
        // Counted through the indexes, not by a scan of every job: the queued through
        // jobs_queued, the ended (each has its `ended` time) through jobs_ended.
        auto queued_count =
            m_database.prepare("SELECT count(*) FROM jobs WHERE queue = ? AND state = 'queued'");
        queued_count.bind(1, m_name).step();
        listing.queued = queued_count.integer(0);
        queued_count.reset();
        auto count = m_database.prepare("SELECT state, count(*) FROM jobs WHERE queue = ? AND "
                                        "ended IS NOT NULL GROUP BY state");
        count.bind(1, m_name);
        while (count.step()) {
            const auto state = state_of(count.text(0));
            const auto number = count.integer(1);
            switch (state) {
            case JobState::queued: listing.queued = number; break;
            case JobState::succeeded: listing.succeeded = number; break;
            case JobState::failed: listing.failed = number; break;
            case JobState::cancelled: listing.cancelled = number; break;
            case JobState::refused: listing.refused = number; break;
            case JobState::skipped:
                listing.skipped = number;
                break;
            case JobState::running:
            case JobState::waiting:
                break;
            }
        }
        count.reset();
        auto queued = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND state = 'queued' ORDER BY priority DESC, "
            "position LIMIT ? OFFSET ?",
            k_job_columns));
        queued.bind(1, m_name)
            .bind(2, static_cast<std::int64_t>(queued_shown))
            .bind(3, static_cast<std::int64_t>(queued_from));
        listing.first_queued = read_jobs(queued);
        // Only the batches that wait for others can have waiting jobs: found through `waits`,
        // so that no index on jobs costs every take and every end a look.
        auto waiting_count = m_database.prepare(
            "SELECT count(*) FROM jobs WHERE queue = ? AND state = 'waiting' AND batch IN "
            "(SELECT batch FROM waits)");
        waiting_count.bind(1, m_name).step();
        listing.waiting = waiting_count.integer(0);
        waiting_count.reset();
        auto waiting = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND state = 'waiting' AND batch IN (SELECT batch "
            "FROM waits) ORDER BY id LIMIT ?",
            k_job_columns));
        waiting.bind(1, m_name).bind(2, static_cast<std::int64_t>(queued_shown));
        listing.first_waiting = read_jobs(waiting);
        std::map<std::int64_t, std::vector<JobDependency>> waits_of_batch; // read once a batch
        for (auto& job : listing.first_waiting) {
            auto found = waits_of_batch.find(job.batch);
            if (found == waits_of_batch.end()) {
                found = waits_of_batch.emplace(job.batch, dependencies_of(job.batch)).first;
            }
            job.after = found->second;
        }
        // `+id`: the few running jobs (jobs_running) are sorted, rather than every job
        // walked in id order.
        auto running = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND state = 'running' ORDER BY +id",
            k_job_columns));
        running.bind(1, m_name);
        listing.running = read_jobs(running);
        auto recent = m_database.prepare(fmt::format(
            "SELECT {} FROM jobs WHERE queue = ? AND ended IS NOT NULL ORDER BY ended DESC "
            "LIMIT ?",
            k_job_columns));
        recent.bind(1, m_name).bind(2, static_cast<std::int64_t>(recent_shown));
        listing.recent = read_jobs(recent);
        listing.workers = workers();
        listing.paused = paused();
    });
    return listing;
}

} // namespace gpusched::queue
