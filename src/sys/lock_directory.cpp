#include <gpusched/sys/lock_directory.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/lease_names.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpusched::sys {
namespace {

constexpr int k_record_open_flags = O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

// Runs `create` with no umask, so shared files and directories get exactly the mode asked
// for. gpusched has no threads, so the process-wide umask is ours to change for a moment.
template <class Create>
int with_no_umask(Create create)
{
    const mode_t saved = umask(0);
    const int result = create();
    const int error = errno;
    umask(saved);
    errno = error;
    return result;
}

[[noreturn]] void untrusted(const std::filesystem::path& path, const std::string& why)
{
    throw UsageError(
        fmt::format("lock directory {} {}; use --lock-dir to name another", path.string(), why));
}

void check_trusted(const std::filesystem::path& path, int fd)
{
    struct stat status {};
    if (fstat(fd, &status) != 0) {
        throw_errno("fstat " + path.string());
    }
    const bool others_write = (status.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (others_write && (status.st_mode & S_ISVTX) == 0) {
        untrusted(path, fmt::format("is writable by others without the sticky bit (mode {:04o}), "
                                    "so anyone could replace its record files (chmod +t it)",
                                    status.st_mode & 07777));
    }
}

UniqueFd open_directory(const std::filesystem::path& path)
{
    return UniqueFd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

[[noreturn]] void cannot_open_directory(const std::filesystem::path& path, int error)
{
    if (error == ELOOP || error == ENOTDIR) {
        untrusted(path, "is not a directory (or is a symbolic link)");
    }
    untrusted(path, fmt::format("cannot be opened: {}", std::strerror(error)));
}

} // namespace

// Every user must reach the same answer (the path names the lease space), so it depends on
// what the directories are, never on who asks: /run/lock/gpusched when it exists or /run/lock is
// shared like /tmp (mode 1777).
std::filesystem::path default_lock_directory()
{
    constexpr const char* k_run_lock = "/run/lock";
    constexpr const char* k_in_run_lock = "/run/lock/gpusched";
    struct stat status {};
    if (stat(k_in_run_lock, &status) == 0 && S_ISDIR(status.st_mode)) {
        return k_in_run_lock;
    }
    if (stat(k_run_lock, &status) == 0 && S_ISDIR(status.st_mode) &&
        (status.st_mode & 01777) == 01777) {
        return k_in_run_lock;
    }
    return "/tmp/gpusched-leases";
}

std::string lease_space_of(const std::filesystem::path& lock_directory)
{
    return lease_space(std::filesystem::absolute(lock_directory).lexically_normal().string());
}

LockDirectory::LockDirectory(std::filesystem::path path, UniqueFd fd)
    : m_path(std::move(path)), m_fd(std::move(fd))
{
}

LockDirectory LockDirectory::open_or_create(const std::filesystem::path& path)
{
    UniqueFd fd = open_directory(path);
    if (!fd && errno == ENOENT) {
        if (with_no_umask([&] { return mkdir(path.c_str(), 01777); }) != 0 && errno != EEXIST) {
            untrusted(path, fmt::format("cannot be created: {}", std::strerror(errno)));
        }
        fd = open_directory(path);
    }
    if (!fd) {
        cannot_open_directory(path, errno);
    }
    check_trusted(path, fd.get());
    return LockDirectory(path, std::move(fd));
}

std::optional<LockDirectory> LockDirectory::open_existing(const std::filesystem::path& path)
{
    UniqueFd fd = open_directory(path);
    if (!fd && errno == ENOENT) {
        return std::nullopt;
    }
    if (!fd) {
        cannot_open_directory(path, errno);
    }
    return LockDirectory(path, std::move(fd));
}

std::filesystem::path LockDirectory::path_of(const std::string& key) const
{
    return m_path / lease_record_file_name(key);
}

bool LockDirectory::removed() const
{
    struct stat status {};
    return fstat(m_fd.get(), &status) != 0 || status.st_nlink == 0;
}

LockDirectory::Opened LockDirectory::open_record(const std::string& key) const
{
    const auto name = lease_record_file_name(key);
    UniqueFd fd;
    // Open what is there, or create it; a file created by another instance between our two
    // calls is simply opened on the next turn.
    for (int turn = 0; turn < 3 && !fd; ++turn) {
        fd.reset(openat(m_fd.get(), name.c_str(), O_RDWR | k_record_open_flags));
        if (!fd && errno == ENOENT) {
            fd.reset(with_no_umask([&] {
                return openat(m_fd.get(), name.c_str(),
                              O_RDWR | O_CREAT | O_EXCL | k_record_open_flags, 0666);
            }));
        }
        if (!fd && errno != EEXIST && errno != ENOENT) {
            break;
        }
    }
    const auto refused = [&](const std::string& why) {
        return Opened{UniqueFd(), fmt::format("{} {}", path_of(key).string(), why)};
    };
    if (!fd) {
        const int error = errno;
        struct stat status {};
        if (error == ELOOP) {
            return refused("is a symbolic link");
        }
        if (error == EACCES &&
            fstatat(m_fd.get(), name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0) {
            return refused(fmt::format("is not writable by you (owner uid {}, mode {:04o})",
                                       status.st_uid, status.st_mode & 07777));
        }
        return refused(fmt::format("cannot be opened: {}", std::strerror(error)));
    }
    struct stat status {};
    if (fstat(fd.get(), &status) != 0) {
        return refused(fmt::format("cannot be examined: {}", std::strerror(errno)));
    }
    if (!S_ISREG(status.st_mode)) {
        return refused("is not a regular file");
    }
    if (status.st_nlink != 1) {
        return refused("has other names (hard links), so writing to it could change another file");
    }
    return Opened{std::move(fd), {}};
}

std::optional<UniqueFd> LockDirectory::open_record_for_reading(const std::string& key) const
{
    UniqueFd fd(
        openat(m_fd.get(), lease_record_file_name(key).c_str(), O_RDONLY | k_record_open_flags));
    if (!fd) {
        return std::nullopt;
    }
    struct stat status {};
    if (fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
        return std::nullopt;
    }
    return fd;
}

bool LockDirectory::still_named(int fd, const std::string& key) const
{
    struct stat opened {};
    struct stat named {};
    return fstat(fd, &opened) == 0 &&
           fstatat(m_fd.get(), lease_record_file_name(key).c_str(), &named, AT_SYMLINK_NOFOLLOW) ==
               0 &&
           opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

std::vector<std::string> LockDirectory::keys() const
{
    const int listing_fd = openat(m_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* listing = listing_fd >= 0 ? fdopendir(listing_fd) : nullptr;
    if (listing == nullptr) {
        if (listing_fd >= 0) {
            close(listing_fd);
        }
        throw_errno("opendir " + m_path.string());
    }
    std::vector<std::string> keys;
    while (const dirent* entry = readdir(listing)) {
        if (auto key = lease_key_of_record_file(entry->d_name)) {
            keys.push_back(std::move(*key));
        }
    }
    closedir(listing);
    std::sort(keys.begin(), keys.end());
    return keys;
}

} // namespace gpusched::sys
