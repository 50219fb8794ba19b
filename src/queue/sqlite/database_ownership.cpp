#include <gpusched/queue/sqlite/database_ownership.hpp>

#include <gpusched/sys/user_account.hpp>

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

namespace gpusched::queue {
namespace {

// Ours, or root's: root can write anything anyway.
bool trusted_owner(uid_t owner)
{
    return owner == geteuid() || owner == 0;
}

// What about `path` lets another user write it, if anything.
std::optional<std::string> writable_by_others(const struct stat& status)
{
    if (!trusted_owner(status.st_uid)) {
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

// The most links followed on the way to a database, as the kernel's limit (ELOOP).
constexpr int k_most_links = 40;

// What about a directory the way to the database passes through lets another user change
// where the way leads, if anything. Writable by others is harmless only with the sticky bit
// (/tmp): nobody can then rename or remove an entry that is not theirs.
std::optional<std::string> passable_by_others(const struct stat& status)
{
    if (!trusted_owner(status.st_uid)) {
        return fmt::format("belongs to {}", sys::user_name(status.st_uid));
    }
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (status.st_mode & S_ISVTX) == 0) {
        return fmt::format("is writable by other users (mode {:04o})", status.st_mode & 07777);
    }
    return std::nullopt;
}

[[noreturn]] void refuse_the_way(const std::filesystem::path& database,
                                 const std::filesystem::path& place, const std::string& why)
{
    throw SharedDatabase(fmt::format(
        "queue database {}: the way to it passes {}, which {}: another user could point it "
        "at a database of theirs, whose jobs would run as you; keep the queue where only you "
        "(and root) can change the way to it (--db elsewhere: each user has their own queue; "
        "the host-wide leases share the GPUs between them)",
        database.string(), place.string(), why));
}

std::deque<std::string> components_of(const std::filesystem::path& path)
{
    std::deque<std::string> components;
    for (const auto& part : path.relative_path()) {
        components.push_back(part.string());
    }
    return components;
}

// The database's own directory and files: nobody but us (and root) may write them. `named`
// is the database as the user named it, through links.
void refuse_shared_database(const std::filesystem::path& database,
                            const std::filesystem::path& named)
{
    const auto absolute = std::filesystem::absolute(database);
    const auto said = named == absolute ? absolute.string()
                                        : fmt::format("{} (which is {})", named.string(),
                                                      absolute.string());
    const auto directory = absolute.parent_path();
    struct stat status {};
    if (stat(directory.c_str(), &status) == 0) {
        if (const auto why = writable_by_others(status)) {
            throw SharedDatabase(fmt::format(
                "queue database {}: its directory {} {}: another user could replace the "
                "database, and run commands as you through it; keep the queue in a directory "
                "of your own (chmod go-w, or --db elsewhere: each user has their own queue; the "
                "host-wide leases share the GPUs between them)",
                said, directory.string(), *why));
        }
    }
    for (const auto* suffix : {"", "-wal", "-shm", "-journal"}) {
        const std::filesystem::path file = absolute.string() + suffix;
        if (lstat(file.c_str(), &status) != 0) {
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

} // namespace

std::filesystem::path trusted_database_location(const std::filesystem::path& database)
{
    // Followed name by name, as the kernel would, so that each directory looked in and each
    // link met is the one that is really used (SQLite puts the -wal and -shm beside the
    // database's real file, wherever a link leads).
    auto pending = components_of(std::filesystem::absolute(database));
    std::filesystem::path at = "/";
    int links = 0;
    while (!pending.empty()) {
        const auto name = std::move(pending.front());
        pending.pop_front();
        if (name.empty() || name == ".") {
            continue;
        }
        if (name == "..") {
            at = at.parent_path();
            continue;
        }
        const auto next = at / name;
        struct stat status {};
        const bool found = lstat(next.c_str(), &status) == 0;
        // The database's own directory is judged below, more strictly (nobody else may write
        // it at all); a link there leads on, so its directory is judged as a way.
        if (!pending.empty() || (found && S_ISLNK(status.st_mode))) {
            struct stat directory {};
            if (lstat(at.c_str(), &directory) == 0) {
                if (const auto why = passable_by_others(directory)) {
                    refuse_the_way(database, at, *why);
                }
            }
        }
        if (!found) {
            // Not made yet (the database, or a directory SQLite will fail to find): what
            // is left of the way is taken as written.
            at = next;
            for (const auto& rest : pending) {
                at /= rest;
            }
            break;
        }
        if (!S_ISLNK(status.st_mode)) {
            at = next;
            continue;
        }
        if (!trusted_owner(status.st_uid)) {
            refuse_the_way(database, next,
                           fmt::format("is a link of {}'s", sys::user_name(status.st_uid)));
        }
        if (++links > k_most_links) {
            throw SharedDatabase(
                fmt::format("queue database {}: too many links on the way", database.string()));
        }
        std::string target(static_cast<std::size_t>(status.st_size) + 1, '\0');
        const auto length = readlink(next.c_str(), target.data(), target.size());
        if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
            throw SharedDatabase(fmt::format("queue database {}: cannot read the link {}: {}",
                                             database.string(), next.string(),
                                             length < 0 ? std::strerror(errno) : "it changed"));
        }
        target.resize(static_cast<std::size_t>(length));
        const std::filesystem::path followed(target);
        if (followed.is_absolute()) {
            at = "/";
        }
        auto more = components_of(followed.is_absolute() ? followed : followed.relative_path());
        pending.insert(pending.begin(), more.begin(), more.end());
    }
    refuse_shared_database(at, std::filesystem::absolute(database));
    return at;
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
