#include <gpusched/queue/sqlite/database_ownership.hpp>

#include <gpusched/sys/user_account.hpp>

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

namespace gpusched::queue {
namespace {

// What about `path` lets another user write it, if anything.
std::optional<std::string> writable_by_others(const struct stat& status)
{
    const uid_t us = geteuid();
    if (status.st_uid != us && status.st_uid != 0) {
        return fmt::format("belongs to {}", sys::user_name(status.st_uid));
    }
    if ((status.st_mode & S_IWOTH) != 0) {
        return fmt::format("is writable by every user (mode {:04o})", status.st_mode & 07777);
    }
    // Even a group of the user's own: who else is in it (as their primary group, or through
    // an ACL, whose mask these bits show) cannot be told from here.
    if ((status.st_mode & S_IWGRP) != 0) {
        return fmt::format("is writable by its group (mode {:04o})", status.st_mode & 07777);
    }
    return std::nullopt;
}

} // namespace

void refuse_shared_database(const std::filesystem::path& database)
{
    const auto absolute = std::filesystem::absolute(database);
    const auto directory = absolute.parent_path();
    struct stat status {};
    if (stat(directory.c_str(), &status) == 0) {
        if (const auto why = writable_by_others(status)) {
            throw SharedDatabase(fmt::format(
                "queue database {}: its directory {} {}: another user could replace the "
                "database, and run commands as you through it; keep the queue in a directory "
                "of your own (chmod go-w, or --db elsewhere: each user has their own queue; the "
                "host-wide leases share the GPUs between them)",
                absolute.string(), directory.string(), *why));
        }
    }
    for (const auto* suffix : {"", "-wal", "-shm", "-journal"}) {
        const std::filesystem::path file = absolute.string() + suffix;
        if (stat(file.c_str(), &status) != 0) {
            continue; // not made yet: its directory is ours alone
        }
        if (const auto why = writable_by_others(status)) {
            throw SharedDatabase(fmt::format(
                "queue database {} {}: whoever can write it can run commands as you, so its "
                "jobs cannot be trusted; make it yours alone (chmod go-w) or use a queue of "
                "your own (each user has their own queue; the host-wide leases share the GPUs "
                "between them)",
                file.string(), *why));
        }
    }
}

void refuse_others_database(const std::filesystem::path& database)
{
    struct stat status {};
    const uid_t us = geteuid();
    if (us == 0 || stat(database.c_str(), &status) != 0 || status.st_uid == us) {
        return;
    }
    throw SharedDatabase(fmt::format("queue database {} is {}'s: only they (or root) can change "
                                     "its jobs and workers",
                                     database.string(), sys::user_name(status.st_uid)));
}

} // namespace gpusched::queue
