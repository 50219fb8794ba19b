#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <type_traits>
#include <unordered_map>
#include <utility>

struct sqlite3;
struct sqlite3_stmt;

namespace gpusched::queue {

// A failure of the database, with SQLite's primary result code so callers can tell a lock
// held by another process (busy: try again) from a full disk, a read-only file or a corrupt
// one. The message names the database's path and what was being done.
class DatabaseError : public std::runtime_error {
public:
    DatabaseError(const std::string& message, int code);
    int code() const { return m_code; }
    // Another connection holds the write lock past the busy timeout: the same call may work
    // a moment later.
    bool busy() const;

private:
    int m_code;
};

class Database;

// Opens a database to read it only: see Database's constructors.
struct ReadOnly {};
inline constexpr ReadOnly read_only{};

// One prepared statement. Parameters are numbered from 1, columns from 0, as in SQLite.
class Statement {
public:
    Statement(Database& database, std::string_view sql);
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind_null(int index);
    Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }

    // Runs the statement to its next row: true when there is one to read.
    bool step();
    // Runs a statement that returns no rows (or whose rows do not matter) to its end.
    void run();
    // Ready to run again, with its parameters cleared.
    void reset();

    bool is_null(int column) const;
    int columns() const; // in each row
    std::int64_t integer(int column) const;
    // Steps through every row, collecting column 0 as integers (ids), then resets.
    std::vector<std::int64_t> integers();
    double real(int column) const;
    std::string text(int column) const;

private:
    Database* m_database;
    sqlite3_stmt* m_statement = nullptr;
};

// A connection to an SQLite database file, in WAL mode (readers never wait for the writer, a
// crash of any process loses no committed transaction), with a busy timeout so that a
// moment's contention between processes is waited out rather than failed.
class Database {
public:
    // Opens the database at `path`, making it when absent, readable and writable by its owner
    // alone (it keeps each submitter's environment). What SQLite opens is the file `path`
    // leads to, by a name with no link in it, and never through a link planted since
    // (SQLITE_OPEN_NOFOLLOW). Throws DatabaseError naming the path.
    Database(std::filesystem::path path, std::chrono::milliseconds busy_timeout);
    // Opens the database at `path` to read it only, making and changing nothing: no database
    // where there is none (a DatabaseError), and no -wal or -shm beside one that no process
    // has open, which is then read as it is on disk. For the shells' completion.
    Database(std::filesystem::path path, ReadOnly, std::chrono::milliseconds busy_timeout);
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    const std::filesystem::path& path() const { return m_path; }

    // Runs SQL that may hold several statements and returns no rows.
    void execute(std::string_view sql);
    Statement prepare(std::string_view sql) { return Statement(*this, sql); }
    // The same, prepared once and kept, reset, for the connection's life: for the statements
    // a worker runs for every job, whose preparing costs about as much as running them.
    Statement& prepare_kept(std::string_view sql);

    // Runs `work` in a read transaction: what it reads is one state of the database.
    template <class Work>
    auto read(Work&& work)
    {
        return run_transaction("BEGIN", std::forward<Work>(work));
    }

    // Runs `work` in a write transaction begun at once (BEGIN IMMEDIATE: the write lock is
    // taken first, so two writers never deadlock on an upgrade); rolled back if it throws.
    // Called inside another write, `work` becomes part of that one: several changes (a
    // worker's results and its next take, say) then cost one commit.
    template <class Work>
    auto write(Work&& work)
    {
        if (in_transaction()) {
            return work();
        }
        return run_transaction("BEGIN IMMEDIATE", std::forward<Work>(work));
    }

    // A transaction of this connection is open.
    bool in_transaction() const;

    // Rows changed by the last INSERT, UPDATE or DELETE.
    std::int64_t changes() const;
    std::int64_t last_insert_id() const;

    // A DatabaseError for the last failure of this connection, saying what was being done.
    [[noreturn]] void fail(int code, std::string_view doing) const;
    // True when the database is in WAL mode already (read without writing).
    bool in_wal_mode();
    // Takes the group's and others' permissions away from the database and its -wal, -shm
    // and -journal, where we may (ours, or we are root), saying so once.
    void make_private() const;
    // Removes the -wal, -shm and -journal of the path when the database itself is missing.
    void forget_files_of_a_removed_database() const;
    // Opens `name` (a path, or a file: URI) with `flags`, or throws naming the path.
    void open(const std::string& name, int flags);

    sqlite3* handle() const { return m_handle; }

private:
    // BEGIN and COMMIT are kept prepared too: a worker runs them for every job.
    template <class Work>
    auto run_transaction(std::string_view begin, Work&& work)
    {
        prepare_kept(begin).run();
        try {
            if constexpr (std::is_void_v<decltype(work())>) {
                work();
                prepare_kept("COMMIT").run();
            } else {
                auto result = work();
                prepare_kept("COMMIT").run();
                return result;
            }
        } catch (...) {
            roll_back();
            throw;
        }
    }
    void roll_back() noexcept;
    void switch_to_wal(std::chrono::milliseconds busy_timeout);

    std::filesystem::path m_path;
    std::filesystem::path m_location; // m_path with its links followed, as SQLite names it
    sqlite3* m_handle = nullptr;
    // Looked up by the SQL's text without copying it into a string first.
    struct TextHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const
        {
            return std::hash<std::string_view>{}(text);
        }
    };
    std::unordered_map<std::string, Statement, TextHash, std::equal_to<>> m_kept;
};

} // namespace gpusched::queue
