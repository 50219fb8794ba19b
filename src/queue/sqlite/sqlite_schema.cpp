// The SQLite queue's tables: made in a new database, brought up to date in one made by an
// earlier version, left alone in one made by a later version.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>

#include <gpusched/job_request.hpp>

#include <fmt/format.h>
#include <sqlite3.h>

#include <optional>
#include <string>
#include <string_view>

namespace gpusched::queue {
namespace {

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
// 6: what a batch's jobs ask of their worker as one value, batches.request (the words of
// encode_request, include/gpusched/job_request.hpp), in place of batches.gpus, timeout_ms
// and retries (left in an upgraded database, unused): a per-job option added since changes
// no table. 7: the most GPU memory each job was seen to use on one GPU (jobs.peak_memory,
// bytes; NULL where it was not watched). 8: how many times each job's worker ran it again
// after it ran out of GPU memory beside other jobs (jobs.memory_reruns; NULL for none).
constexpr int k_schema_version = 8;

// A batch is one submission: its jobs run in its directory, with its environment (NAME=VALUE
// entries each ended by a NUL byte) and umask, as its user (uid and name); all NULL in a
// batch queued before schema 3, whose jobs run as the worker does.
const std::string_view k_batch_columns_of_schema_3[] = {
    "directory TEXT", "environment BLOB", "umask INTEGER", "uid INTEGER", "user TEXT"};
// The label a batch's jobs are known by (schema 4).
constexpr std::string_view k_batch_column_of_schema_4 = "name TEXT";

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
    name TEXT,
    request TEXT
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
    output TEXT,
    peak_memory INTEGER,
    memory_reruns INTEGER
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

bool has_column(Database& database, std::string_view table, std::string_view column)
{
    auto query = database.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
    const bool found = query.bind(1, table).bind(2, column).step();
    query.reset();
    return found;
}

// Schema 4 and 5 kept what a batch's jobs ask in three columns (NULL: not asked): each
// batch's become its request's encoding. The columns stay, read and written by nothing of
// this version: a worker of the version before, still running when its database is upgraded
// (it looks at the version when it opens it), would otherwise fail every take, and go on
// serving the queue while running nothing. Told by the columns there, not by the version
// alone, so that an upgrade cut short is finished by the next.
void move_requests_into_one_column(Database& database)
{
    if (!has_column(database, "batches", "request")) {
        database.execute("ALTER TABLE batches ADD COLUMN request TEXT");
    }
    if (!has_column(database, "batches", "gpus")) {
        return;
    }
    auto asked = database.prepare("SELECT id, gpus, timeout_ms, retries FROM batches WHERE gpus "
                                  "IS NOT NULL OR timeout_ms IS NOT NULL OR retries IS NOT NULL");
    auto set = database.prepare("UPDATE batches SET request = ? WHERE id = ?");
    while (asked.step()) {
        JobRequest request;
        if (!asked.is_null(1) && asked.integer(1) > 0) {
            request.gpus = static_cast<std::size_t>(asked.integer(1));
        }
        if (!asked.is_null(2) && asked.integer(2) > 0) {
            request.timeout = std::chrono::milliseconds(asked.integer(2));
        }
        if (!asked.is_null(3) && asked.integer(3) >= 0) {
            request.retries = static_cast<unsigned>(asked.integer(3));
        }
        set.bind(1, encode_request(request)).bind(2, asked.integer(0)).run();
    }
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
    if (found && found != "1" && found != "2" && found != "3" && found != "4" && found != "5" &&
        found != "6" && found != "7" && found != std::to_string(k_schema_version)) {
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
        database.execute(
            fmt::format("ALTER TABLE batches ADD COLUMN {}", k_batch_column_of_schema_4));
        database.execute("ALTER TABLE workers ADD COLUMN stop TEXT");
    }
    if (found && found != std::to_string(k_schema_version)) {
        move_requests_into_one_column(database);
        // Told by the column, as above: an upgrade cut short is finished by the next.
        if (!has_column(database, "jobs", "peak_memory")) {
            database.execute("ALTER TABLE jobs ADD COLUMN peak_memory INTEGER");
        }
        if (!has_column(database, "jobs", "memory_reruns")) {
            database.execute("ALTER TABLE jobs ADD COLUMN memory_reruns INTEGER");
        }
    }
    // Schema 5 made the files private already: a chmod since is its owner's choice to share.
    if (found == "1" || found == "2" || found == "3" || found == "4") {
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

} // namespace gpusched::queue
