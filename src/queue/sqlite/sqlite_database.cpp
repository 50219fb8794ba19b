#include <gpusched/queue/sqlite/sqlite_database.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <thread>

namespace gpusched::queue {
namespace {

// `path` as the path of a file: URI, its special characters escaped.
std::string uri_path(const std::filesystem::path& path)
{
    std::string escaped;
    for (const char c : std::filesystem::absolute(path).string()) {
        if (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-~", c) != nullptr) {
            escaped += c;
        } else {
            escaped += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        }
    }
    return escaped;
}

// `path` with its links followed; a database not made yet is named as written beneath its
// directory's real place.
std::filesystem::path located(const std::filesystem::path& path)
{
    std::error_code error;
    auto location = std::filesystem::weakly_canonical(std::filesystem::absolute(path), error);
    return error ? std::filesystem::absolute(path) : location;
}

// A new database is made here, owner-only, before SQLite opens it: SQLite would make it with
// the umask's mode (0644, readable by every user), and its -wal and -shm take the database's
// mode. Never through a link, and never a file someone else made first (O_EXCL).
void make_private_file(const std::filesystem::path& path)
{
    const int made =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (made >= 0) {
        ::close(made);
    }
    // EEXIST: made before; any other error is SQLite's to report, naming the path.
}

} // namespace

DatabaseError::DatabaseError(const std::string& message, int code)
    : std::runtime_error(message), m_code(code)
{
}

bool DatabaseError::busy() const
{
    const int primary = m_code & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

Database::Database(std::filesystem::path path, std::chrono::milliseconds busy_timeout)
    : m_path(std::move(path)), m_location(located(m_path))
{
    forget_files_of_a_removed_database();
    make_private_file(m_location);
    open(m_location.string(),
         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW);
    sqlite3_busy_timeout(m_handle, static_cast<int>(busy_timeout.count()));
    try {
        // WAL: readers (`gpusched queue`) never wait for a writer, and a commit is one append,
        // not a rewrite of the file. synchronous=NORMAL in WAL mode loses no committed
        // transaction when a process dies, only (on a power failure) the last ones before
        // the next checkpoint; a commit then costs no fsync, which a worker starting
        // thousands of short jobs would feel.
        switch_to_wal(busy_timeout);
        execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
    } catch (const DatabaseError& error) {
        sqlite3_close(m_handle);
        m_handle = nullptr;
        // Another user's queue, which we may read but not write, and which no process has
        // open (no -wal, so no -shm we could share): read as it is on disk, whole.
        const auto wal = m_location.string() + "-wal";
        if ((error.code() & 0xff) != SQLITE_READONLY || access(m_location.c_str(), W_OK) == 0 ||
            access(wal.c_str(), F_OK) == 0) {
            throw;
        }
        open("file:" + uri_path(m_location) + "?immutable=1",
             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW);
    } catch (...) {
        sqlite3_close(m_handle);
        m_handle = nullptr;
        throw;
    }
}

Database::Database(std::filesystem::path path, ReadOnly, std::chrono::milliseconds busy_timeout)
    : m_path(std::move(path)), m_location(located(m_path))
{
    // A database in WAL mode is read with its -wal and -shm, which every connection of a
    // process that has it open shares. Where none is open there is no -wal (the last to close
    // removes it), and a read-only connection would make both: the file alone is then the
    // whole database. A writer opening it at that very moment may make a read fail (a
    // DatabaseError, as for any other); it never makes it wrong for long.
    const auto wal = m_location.string() + "-wal";
    const bool open_elsewhere = access(wal.c_str(), F_OK) == 0;
    open("file:" + uri_path(m_location) + (open_elsewhere ? "?mode=ro" : "?immutable=1"),
         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW);
    sqlite3_busy_timeout(m_handle, static_cast<int>(busy_timeout.count()));
}

// A database removed while in use leaves its -wal and -shm behind: a new database made under
// the same name would take that log for its own and replay the old queue into itself (every
// finished job queued again). The database itself is what is missing, so they are nobody's.
//
// Each file is seen first, the database's absence after: a process making the database at the
// same moment makes the database before its -wal, so a -wal seen before the database was found
// missing is not that process's (checked the other way round, a first submit racing another
// removed the -wal the other had just made).
void Database::forget_files_of_a_removed_database() const
{
    std::error_code error;
    for (const auto* suffix : {"-wal", "-shm", "-journal"}) {
        const std::filesystem::path left = m_location.string() + suffix;
        if (!std::filesystem::exists(left, error) || error ||
            std::filesystem::exists(m_location, error) || error) {
            continue;
        }
        if (std::filesystem::remove(left, error)) {
            spdlog::warn("database {}: removed {}, left by a database of that name that was "
                         "removed",
                         m_path.string(), left.string());
        }
    }
}

void Database::make_private() const
{
    bool changed = false;
    for (const auto* suffix : {"", "-wal", "-shm", "-journal"}) {
        const auto file = m_location.string() + suffix;
        struct stat status {};
        if (::lstat(file.c_str(), &status) != 0 || !S_ISREG(status.st_mode) ||
            (status.st_mode & 077) == 0 || (status.st_uid != geteuid() && geteuid() != 0)) {
            continue;
        }
        changed = ::chmod(file.c_str(), status.st_mode & 0700) == 0 || changed;
    }
    if (changed) {
        spdlog::warn("database {}: now readable by its owner alone, as it keeps each "
                     "submitter's environment (chmod to share it)",
                     m_path.string());
    }
}

void Database::open(const std::string& name, int flags)
{
    const int opened = sqlite3_open_v2(name.c_str(), &m_handle, flags, nullptr);
    if (opened != SQLITE_OK) {
        std::string why = m_handle != nullptr ? sqlite3_errmsg(m_handle) : sqlite3_errstr(opened);
        // "unable to open database file" does not say why; the system's error does.
        if (const int error = m_handle != nullptr ? sqlite3_system_errno(m_handle) : 0;
            error != 0) {
            why += fmt::format(" ({})", std::strerror(error));
        }
        sqlite3_close(m_handle);
        m_handle = nullptr;
        throw DatabaseError(fmt::format("database {}: cannot open: {}", m_path.string(), why),
                            opened);
    }
    sqlite3_extended_result_codes(m_handle, 1);
}

void Database::switch_to_wal(std::chrono::milliseconds busy_timeout)
{
    // Processes opening a new database together race to switch it to WAL, and the losers
    // are told SQLITE_BUSY at once, without the busy handler: they try again, within the
    // timeout, until the winner is done (a database in WAL mode already switches at once).
    const auto give_up = std::chrono::steady_clock::now() + busy_timeout;
    for (;;) {
        const int result =
            sqlite3_exec(m_handle, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
        if (result == SQLITE_OK) {
            return;
        }
        if ((result & 0xff) == SQLITE_READONLY && in_wal_mode()) {
            return; // another user's queue, read only: theirs is switched already
        }
        if ((result & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= give_up) {
            fail(result, "PRAGMA journal_mode");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

bool Database::in_wal_mode()
{
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(m_handle, "PRAGMA journal_mode", -1, &statement, nullptr) != SQLITE_OK) {
        return false;
    }
    const bool wal = sqlite3_step(statement) == SQLITE_ROW &&
                     std::string_view(reinterpret_cast<const char*>(
                         sqlite3_column_text(statement, 0))) == "wal";
    sqlite3_finalize(statement);
    return wal;
}

Database::~Database()
{
    m_kept.clear(); // finalized before the connection closes
    sqlite3_close_v2(m_handle);
}

Statement& Database::prepare_kept(std::string_view sql)
{
    auto found = m_kept.find(sql);
    if (found == m_kept.end()) {
        found = m_kept.try_emplace(std::string(sql), *this, sql).first;
    }
    // An exception may have left it part-way through its rows.
    found->second.reset();
    return found->second;
}

void Database::fail(int code, std::string_view doing) const
{
    std::string why = m_handle != nullptr ? sqlite3_errmsg(m_handle) : sqlite3_errstr(code);
    switch (code & 0xff) {
    case SQLITE_FULL:
        why += " (the disk holding it is full)";
        break;
    case SQLITE_READONLY:
        why += " (it cannot be written: check its permissions and those of its directory)";
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        why += " (another process holds its write lock: one stopped with Ctrl-Z or SIGSTOP, "
               "say; nothing was changed, try again once it goes on)";
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        why += " (move it aside to start an empty queue)";
        break;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
        // SQLite's own words ("unable to open database file", "disk I/O error") do not say
        // why; the system's error does (too many open files, a permission, a full disk).
        if (const int error = m_handle != nullptr ? sqlite3_system_errno(m_handle) : 0;
            error != 0) {
            why += fmt::format(" ({})", std::strerror(error));
        }
        break;
    default:
        break;
    }
    throw DatabaseError(fmt::format("database {}: {}: {}", m_path.string(), doing, why), code);
}

void Database::execute(std::string_view sql)
{
    const std::string text(sql);
    char* message = nullptr;
    const int result = sqlite3_exec(m_handle, text.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);
    if (result != SQLITE_OK) {
        fail(result, text.substr(0, text.find_first_of(" ;")));
    }
}

bool Database::in_transaction() const
{
    return sqlite3_get_autocommit(m_handle) == 0;
}

void Database::roll_back() noexcept
{
    if (in_transaction()) {
        sqlite3_exec(m_handle, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

std::int64_t Database::changes() const
{
    return sqlite3_changes64(m_handle);
}

std::int64_t Database::last_insert_id() const
{
    return sqlite3_last_insert_rowid(m_handle);
}

Statement::Statement(Database& database, std::string_view sql) : m_database(&database)
{
    const int result = sqlite3_prepare_v3(database.handle(), sql.data(),
                                          static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                          &m_statement, nullptr);
    if (result != SQLITE_OK) {
        database.fail(result, "preparing a statement");
    }
}

Statement::Statement(Statement&& other) noexcept
    : m_database(other.m_database), m_statement(other.m_statement)
{
    other.m_statement = nullptr;
}

Statement::~Statement()
{
    sqlite3_finalize(m_statement);
}

namespace {

void check_bind(const Database& database, int result)
{
    if (result != SQLITE_OK) {
        database.fail(result, "binding a parameter");
    }
}

} // namespace

Statement& Statement::bind(int index, std::int64_t value)
{
    check_bind(*m_database, sqlite3_bind_int64(m_statement, index, value));
    return *this;
}

Statement& Statement::bind(int index, double value)
{
    check_bind(*m_database, sqlite3_bind_double(m_statement, index, value));
    return *this;
}

Statement& Statement::bind(int index, std::string_view text)
{
    check_bind(*m_database, sqlite3_bind_text64(m_statement, index, text.data(), text.size(),
                                                SQLITE_TRANSIENT, SQLITE_UTF8));
    return *this;
}

Statement& Statement::bind_null(int index)
{
    check_bind(*m_database, sqlite3_bind_null(m_statement, index));
    return *this;
}

bool Statement::step()
{
    const int result = sqlite3_step(m_statement);
    if (result == SQLITE_ROW) {
        return true;
    }
    if (result == SQLITE_DONE) {
        return false;
    }
    const std::string sql = sqlite3_sql(m_statement);
    try {
        m_database->fail(result, sql.substr(0, sql.find(' ')));
    } catch (...) {
        sqlite3_reset(m_statement);
        throw;
    }
}

void Statement::run()
{
    while (step()) {
    }
    reset();
}

void Statement::reset()
{
    sqlite3_reset(m_statement);
    sqlite3_clear_bindings(m_statement);
}

bool Statement::is_null(int column) const
{
    return sqlite3_column_type(m_statement, column) == SQLITE_NULL;
}

std::int64_t Statement::integer(int column) const
{
    return sqlite3_column_int64(m_statement, column);
}

double Statement::real(int column) const
{
    return sqlite3_column_double(m_statement, column);
}

int Statement::columns() const
{
    return sqlite3_column_count(m_statement);
}

std::string Statement::text(int column) const
{
    const auto* bytes = sqlite3_column_text(m_statement, column);
    return bytes == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(bytes),
                             static_cast<std::size_t>(sqlite3_column_bytes(m_statement, column)));
}

std::vector<std::int64_t> Statement::integers()
{
    std::vector<std::int64_t> values;
    while (step()) {
        values.push_back(integer(0));
    }
    reset();
    return values;
}

} // namespace gpusched::queue
