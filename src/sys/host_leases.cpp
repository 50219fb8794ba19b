#include <gpusched/sys/host_leases.hpp>

#include <gpusched/errors.hpp>

#include <gpusched/sys/lease_lock.hpp>
#include <gpusched/sys/lease_state.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>

namespace gpusched::sys {
namespace {

std::string user_name(uid_t uid)
{
    const passwd* entry = getpwuid(uid);
    return entry != nullptr ? entry->pw_name : std::to_string(uid);
}

UniqueFd duplicate_above(int fd, int lowest)
{
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, lowest));
    if (!copy) {
        throw_errno("fcntl F_DUPFD_CLOEXEC");
    }
    return copy;
}

} // namespace

HostLeases::HostLeases(LockDirectory directory, std::vector<std::string> keys)
    : m_directory(std::move(directory)), m_user(user_name(getuid())), m_uid(getuid()),
      m_leases(keys.size()),
      // fds 0-2, one per GPU a job may get, the run guard's marker, a long command's script
      m_first_private_fd(static_cast<int>(3 + keys.size() + 2))
{
    for (std::size_t slot = 0; slot < keys.size(); ++slot) {
        m_leases[slot].key = std::move(keys[slot]);
    }
    // Every lock file is opened once now, so a planted or unusable one stops the run before
    // any job starts rather than in the middle of it.
    for (auto& lease : m_leases) {
        m_directory.open_lock(lease.key);
    }
    find_inherited();
}

HostLeases::~HostLeases()
{
    cancel_waits();
}

// A gpusched started inside a gpusched job (or under `gpusched exec`) was handed its GPUs'
// lease descriptors: those leases are already its own, and waiting for them would wait for
// itself forever.
void HostLeases::find_inherited()
{
    std::vector<struct stat> lock_files(m_leases.size());
    for (std::size_t slot = 0; slot < m_leases.size(); ++slot) {
        const auto fd = m_directory.open_lock_for_reading(m_leases[slot].key);
        if (!fd || fstat(fd->get(), &lock_files[slot]) != 0) {
            lock_files[slot].st_ino = 0;
        }
    }
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
        const int fd = std::atoi(entry.path().filename().c_str());
        struct stat opened {};
        if (fd <= STDERR_FILENO || fcntl(fd, F_GETFD) != 0 || fstat(fd, &opened) != 0) {
            continue; // close-on-exec descriptors are our own, not inherited
        }
        for (std::size_t slot = 0; slot < m_leases.size(); ++slot) {
            const auto& file = lock_files[slot];
            const bool same_file =
                file.st_ino != 0 && file.st_ino == opened.st_ino && file.st_dev == opened.st_dev;
            if (same_file && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR && try_lock_exclusive(fd)) {
                m_leases[slot].inherited = fd;
            }
        }
    }
}

bool HostLeases::lock(Lease& lease)
{
    if (lease.inherited >= 0) {
        lease.fd = duplicate_above(lease.inherited, m_first_private_fd);
        return true;
    }
    // A lock on a file that was removed and created anew excludes nobody: lock the file
    // that is there now. Only a cleaner racing us could make this take more than one turn.
    constexpr int k_turns = 3;
    for (int turn = 0; turn < k_turns; ++turn) {
        if (!lease.fd) {
            lease.fd = duplicate_above(m_directory.open_lock(lease.key).get(), m_first_private_fd);
        }
        if (!try_lock_exclusive(lease.fd.get())) {
            return false;
        }
        if (m_directory.still_named(lease.fd.get(), lease.key)) {
            return true;
        }
        lease.fd.reset();
    }
    throw UsageError(fmt::format("cannot lease GPU {}: {} keeps being replaced", lease.key,
                                 m_directory.path_of(lease.key).string()));
}

bool HostLeases::try_take(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    if (lease.locked) {
        return true;
    }
    if (lease.waiter > 0 || !lock(lease)) {
        return false;
    }
    lease.locked = true;
    lease.record_size = 0;
    return true;
}

int HostLeases::fd(GpuSlot slot) const
{
    const auto& lease = m_leases.at(slot);
    return lease.locked ? lease.fd.get() : -1;
}

void HostLeases::release(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    if (lease.waiter <= 0) {
        lease.fd.reset();
        lease.locked = false;
    }
}

void HostLeases::describe(GpuSlot slot, std::vector<LeaseHolder> jobs)
{
    auto& lease = m_leases.at(slot);
    if (!lease.locked || lease.inherited >= 0) {
        return; // an inherited lease is described by the process that took it
    }
    auto text = format_lease_record(
        LeaseRecord{m_user, m_uid, static_cast<long>(getpid()), std::move(jobs)});
    // One write, padded over the longer record it replaces: a reader never sees it empty.
    const auto written = text.size();
    if (text.size() < lease.record_size) {
        text.insert(text.size() - 1, lease.record_size - text.size(), ' ');
    } else if (lease.record_size == 0) {
        if (ftruncate(lease.fd.get(), 0) != 0) {
            return; // information only
        }
    }
    if (pwrite(lease.fd.get(), text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
        lease.record_size = std::max(lease.record_size, written);
    }
}

std::optional<LeaseRecord> HostLeases::holder(GpuSlot slot) const
{
    return read_lease_state(m_directory, m_leases.at(slot).key).record;
}

void HostLeases::wait_for(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    if (lease.locked || lease.waiter > 0) {
        return;
    }
    if (!lease.fd) {
        lease.fd = duplicate_above(m_directory.open_lock(lease.key).get(), m_first_private_fd);
    }
    lease.waiter = start_lock_waiter(lease.fd.get());
}

std::optional<HostLeases::WaitEnd> HostLeases::on_child_exit(pid_t pid, int wait_status)
{
    for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
        auto& lease = m_leases[slot];
        if (lease.waiter != pid) {
            continue;
        }
        lease.waiter = -1;
        if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0) {
            throw_error_code(WEXITSTATUS(wait_status),
                             "waiting for the lock of " + m_directory.path_of(lease.key).string());
        }
        const bool granted =
            WIFEXITED(wait_status) && m_directory.still_named(lease.fd.get(), lease.key);
        if (granted) {
            lease.locked = true;
            lease.record_size = 0;
        } else {
            lease.fd.reset(); // killed, or its file was replaced: look again from the start
        }
        return WaitEnd{slot, granted};
    }
    return std::nullopt;
}

GpuSlots HostLeases::cancel_waits()
{
    GpuSlots cancelled;
    for (GpuSlot slot = 0; slot < m_leases.size(); ++slot) {
        auto& lease = m_leases[slot];
        if (lease.waiter <= 0) {
            continue;
        }
        kill(lease.waiter, SIGKILL);
        while (waitpid(lease.waiter, nullptr, 0) < 0 && errno == EINTR) {
        }
        lease.waiter = -1;
        lease.fd.reset(); // the waiter may have taken the lock just before it died
        cancelled.push_back(slot);
    }
    return cancelled;
}

} // namespace gpusched::sys
