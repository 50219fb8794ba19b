#include <gpusched/queue/sqlite/database_file.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

namespace gpusched::queue {

std::optional<DatabaseFile> database_file(const std::filesystem::path& database)
{
    struct stat status {};
    if (stat(database.c_str(), &status) != 0) {
        return std::nullopt;
    }
    return DatabaseFile{status.st_dev, status.st_ino};
}

DatabaseFate fate_of(const std::optional<DatabaseFile>& opened,
                     const std::optional<DatabaseFile>& now)
{
    if (now == opened) {
        return DatabaseFate::same;
    }
    return now ? DatabaseFate::replaced : DatabaseFate::removed;
}

std::string fate_message(const std::filesystem::path& database, DatabaseFate fate)
{
    switch (fate) {
    case DatabaseFate::same:
        return {};
    case DatabaseFate::removed:
        return fmt::format("queue database {} was removed", database.string());
    case DatabaseFate::replaced:
        return fmt::format("queue database {} was replaced by another file", database.string());
    }
    return {};
}

} // namespace gpusched::queue
