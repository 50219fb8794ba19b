#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// Where leases live unless --lock-dir or GPUSCHED_LOCK_DIR says otherwise: /run/lock/gpusched
// (never aged out, unlike /tmp), or /tmp/gpusched-leases where /run/lock is missing or not
// open to every user.
std::filesystem::path default_lock_directory();

// The directory every user's gpusched shares, with one lock file per GPU. It is trusted the
// way /tmp is: sticky and world-writable, so nobody can remove or replace another user's
// files. Everything in it is opened through the directory's descriptor with O_NOFOLLOW, so a
// symbolic link, FIFO or hard link planted there is refused instead of followed, and a GPU id
// never reaches the file system raw (see lease_file_name).
class LockDirectory {
public:
    // Opens the directory, creating it (mode 1777) when missing. Throws UsageError when it
    // cannot be trusted: not a directory, a symbolic link, or writable by others without the
    // sticky bit.
    static LockDirectory open_or_create(const std::filesystem::path& path);
    // For reading only; nothing when the directory does not exist.
    static std::optional<LockDirectory> open_existing(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path path_of(const std::string& key) const;

    // The lock file of `key` for reading and writing, created with mode 0666 whatever the
    // umask. Throws UsageError naming the file when it is anything but a regular file with no
    // other name that we may write, so that a planted file can neither redirect our writes
    // nor let a job run without a lease.
    UniqueFd open_lock(const std::string& key) const;
    // For reading only; nothing when there is no such file.
    std::optional<UniqueFd> open_lock_for_reading(const std::string& key) const;
    // True while `fd` is still the file named for `key`. A lock file removed and created anew
    // (by a cleaner of old files) is another file, and a lock on the old one excludes nobody.
    bool still_named(int fd, const std::string& key) const;
    // The keys of the lock files present, in name order.
    std::vector<std::string> keys() const;

private:
    LockDirectory(std::filesystem::path path, UniqueFd fd);

    std::filesystem::path m_path;
    UniqueFd m_fd;
};

} // namespace gpusched::sys
