#pragma once

#include <filesystem>
#include <stdexcept>

namespace gpusched::queue {

// A local queue's database that another user can write, or whose directory another user can
// write (to replace the file or plant its -wal), cannot be trusted: its rows would be
// anyone's commands, run as whoever serves the queue. Submitting and serving refuse it, as
// ssh refuses an authorized_keys others can write. Root is trusted: it can write anything.
class SharedDatabase : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where `database` really is, with no link left in the path, once the whole way there is
// found to be ours: as ssh judges a key file, every directory looked in belongs to us or root
// and no other user can change it (a sticky directory such as /tmp aside), every link met is
// ours or root's; and no other user can write the database's own directory, nor the file or
// its -wal, -shm or -journal (a file not made yet is judged by its directory). Throws
// SharedDatabase naming the place that fails. SQLite keeps the -wal and -shm beside the real file,
// so a check of the path as written would judge the wrong directory.
std::filesystem::path trusted_database_location(const std::filesystem::path& database);

// Throws SharedDatabase when the database belongs to another user and we are not root: its
// queue, its jobs and its workers are theirs to change (cancel, retry, pause, resume).
void refuse_others_database(const std::filesystem::path& database);

} // namespace gpusched::queue
