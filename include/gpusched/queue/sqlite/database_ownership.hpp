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

// Throws SharedDatabase naming what others can write: the file (or its -wal, -shm or
// -journal), or its directory. A file not made yet is judged by its directory.
void refuse_shared_database(const std::filesystem::path& database);

// Throws SharedDatabase when the database belongs to another user and we are not root: its
// queue, its jobs and its workers are theirs to change (cancel, retry, pause, resume).
void refuse_others_database(const std::filesystem::path& database);

} // namespace gpusched::queue
