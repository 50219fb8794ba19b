#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace gpusched::queue {

// The file a database's path names, by device and inode: a connection keeps reading the file
// it opened after that file is removed, or replaced by another under the same name (a queue
// removed and made anew), and only this tells it that its answers are no longer the queue's.
struct DatabaseFile {
    dev_t device = 0;
    ino_t inode = 0;
    bool operator==(const DatabaseFile&) const = default;
};

// The file `database` names now; none when it names none.
std::optional<DatabaseFile> database_file(const std::filesystem::path& database);

// What became of the file a connection opened (`opened`, as database_file() told then), now
// that the path names `now`.
enum class DatabaseFate { same, removed, replaced };
DatabaseFate fate_of(const std::optional<DatabaseFile>& opened,
                     const std::optional<DatabaseFile>& now);

// "queue database PATH was removed" (or "replaced by another file"); "" for `same`.
std::string fate_message(const std::filesystem::path& database, DatabaseFate fate);

} // namespace gpusched::queue
