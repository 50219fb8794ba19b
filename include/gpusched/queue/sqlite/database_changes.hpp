#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <chrono>
#include <filesystem>
#include <string>

namespace gpusched::queue {

// Tells a process that follows a local queue (`submit --wait`, `wait`) that the database was
// written, so that it looks at once instead of every so often: every commit in WAL mode writes
// the -wal file, and an inotify watch on the database's directory sees it. The database
// removed, or made anew under its name, counts as written: the watch is on the directory, so
// it goes on watching the name whichever file it names. Without a watch
// (inotify's limits), waits end at a short timeout, so a look is never long in coming.
class DatabaseChanges {
public:
    explicit DatabaseChanges(const std::filesystem::path& database);

    // Waits until the database was written or `most` has passed; true when it was written (or
    // may have been: without a watch, nothing tells).
    // A commit writes the -wal, which ends a wait, a moment before it can be read: the wait
    // after one that saw a write ends within 5 ms whatever comes, and says true, so that the
    // look made after it sees that commit (and the second of two commits one wake may have
    // covered).
    bool wait(std::chrono::milliseconds most);

private:
    sys::UniqueFd m_watch;
    std::string m_database_name;
    std::string m_wal_name;
    bool m_written = false; // the last wait saw a write
};

} // namespace gpusched::queue
