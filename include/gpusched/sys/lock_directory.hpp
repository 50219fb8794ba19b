#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// The lock directory unless --lock-dir or GPUSCHED_LOCK_DIR says otherwise:
// /run/lock/gpusched (never aged out, unlike /tmp), or /tmp/gpusched-leases where /run/lock is
// missing or not open to every user. Its path names the lease space (lease_space); the
// directory itself holds only the records of who holds each lease.
std::filesystem::path default_lock_directory();
// The lease space a lock directory names (lease_space): a relative path names the same space
// from anywhere.
std::string lease_space_of(const std::filesystem::path& lock_directory);

// The directory every user's gpusched shares, with one record file per GPU. It is trusted the
// way /tmp is: sticky and world-writable. Everything in it is opened through the directory's
// descriptor with O_NOFOLLOW, so a symbolic link, FIFO or hard link planted there is refused
// instead of followed, and a GPU id never reaches the file system raw (see
// lease_record_file_name). Nothing in it decides who holds a GPU: a record that cannot be
// written is a record missing, and a run goes on without it.
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
    // True once the directory we opened has been removed (`rm -rf`, a cleaner of /tmp).
    bool removed() const;

    // The record file of `key` for reading and writing, created with mode 0666 whatever the
    // umask; or why not: anything but a regular file with no other name that we may write is
    // refused, so that a planted file cannot redirect our writes.
    struct Opened {
        UniqueFd fd;
        std::string problem; // when fd is not open
    };
    Opened open_record(const std::string& key) const;
    // For reading only; nothing when there is no such regular file.
    std::optional<UniqueFd> open_record_for_reading(const std::string& key) const;
    // True while `fd` is still the file named for `key`: one removed, or removed and created
    // anew, is no longer anyone's record.
    bool still_named(int fd, const std::string& key) const;
    // The keys of the record files present, in name order.
    std::vector<std::string> keys() const;

private:
    LockDirectory(std::filesystem::path path, UniqueFd fd);

    std::filesystem::path m_path;
    UniqueFd m_fd;
};

} // namespace gpusched::sys
