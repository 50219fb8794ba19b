#include <gpusched/sys/host_leases.hpp>

#include <gpusched/lease_names.hpp>
#include <gpusched/sys/descriptor_copy.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/lease_state.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace gpusched::sys {
namespace {

// fds 0-2, one per GPU a job may get and one more per MIG instance's share, the run guard's
// marker, a long command's script
int lowest_private_fd(const std::vector<std::string>& keys, const std::vector<std::string>& parents)
{
    const auto shares = std::count_if(parents.begin(), parents.end(),
                                      [](const std::string& parent) { return !parent.empty(); });
    return static_cast<int>(3 + keys.size() + static_cast<std::size_t>(shares) + 2);
}

} // namespace

HostLeases::HostLeases(std::filesystem::path lock_directory, std::vector<std::string> keys,
                       std::vector<std::string> parents)
    : m_lock_directory(std::move(lock_directory)), m_space(lease_space_of(m_lock_directory)),
      m_user(user_name(getuid())), m_uid(getuid()), m_leases(keys.size())
{
    parents.resize(keys.size());
    m_first_private_fd = lowest_private_fd(keys, parents);
    for (std::size_t slot = 0; slot < keys.size(); ++slot) {
        auto& lease = m_leases[slot];
        lease.name = lease_socket_name(m_space, keys[slot]);
        lease.blocker = lease.name;
        if (!parents[slot].empty()) {
            lease.parent_key = parents[slot];
            lease.parent_name = lease_socket_name(m_space, parents[slot]);
            lease.share_name = lease_share_name(m_space, parents[slot], keys[slot]);
        } else {
            if (may_have_mig_instances(keys[slot])) {
                lease.shares_prefix = lease_shares_prefix(m_space, keys[slot]);
            }
            lease.memory_prefix = lease_memory_shares_prefix(m_space, keys[slot]);
            lease.admission = lease_admission_name(m_space, keys[slot]);
            lease.whole_wait_name = lease_whole_wait_name(m_space, keys[slot]);
        }
        lease.key = std::move(keys[slot]);
    }
    records(); // a directory that cannot hold records is reported before any job starts
    find_inherited();
}

HostLeases::~HostLeases() = default;

// A gpusched started inside a gpusched job (or under `gpusched exec`) was handed its GPUs'
// lease sockets: those leases are already its own, and waiting for them would wait for
// itself forever. A name has one socket, so a socket bound to it is the lease.
void HostLeases::find_inherited()
{
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
        const int fd = std::atoi(entry.path().filename().c_str());
        if (fd <= STDERR_FILENO || fcntl(fd, F_GETFD) != 0) {
            continue; // close-on-exec descriptors are our own, not inherited
        }
        const auto name = listening_name(fd);
        for (auto& lease : m_leases) {
            if (name && !lease.memory_prefix.empty() && name->starts_with(lease.memory_prefix)) {
                lease.inherited_shares.push_back(*name); // ours: it never keeps us waiting
            } else if (holds_lease(fd, lease.name)) {
                lease.inherited = fd;
            } else if (!lease.share_name.empty() && holds_lease(fd, lease.share_name)) {
                lease.share_inherited = fd;
            }
        }
    }
}

// The directory of the records, opened again when it was removed: records are information,
// so one that cannot be written is reported once and the run goes on without it.
const LockDirectory* HostLeases::records()
{
    if (m_records && !m_records->removed()) {
        return &*m_records;
    }
    m_records.reset();
    try {
        m_records = LockDirectory::open_or_create(m_lock_directory);
        return &*m_records;
    } catch (const std::exception& error) {
        if (!std::exchange(m_records_warned, true)) {
            spdlog::warn("{}; leases hold all the same, but `gpusched status` cannot show their "
                         "jobs",
                         error.what());
        }
        return nullptr;
    }
}

// Binds the lease's names: its own, and a MIG instance's share of its GPU. Each side of a
// GPU and its MIG instances looks for the other only once its own names are bound, so that
// of two that race, at least one finds the other and lets go (lease_share_name).
bool HostLeases::bind_names(Lease& lease)
{
    lease.blocker = lease.name;
    lease.blocked = Blocker::own_name;
    auto bound = bind_lease(lease.name);
    if (!bound) {
        return false;
    }
    if (!lease.share_name.empty()) {
        auto share = bind_lease(lease.share_name);
        if (!share) {
            lease.blocker = lease.share_name; // another holder of this instance, lingering
            return false;
        }
        if (lease_is_bound(lease.parent_name)) {
            lease.blocker = lease.parent_name;
            lease.blocked = Blocker::whole_parent;
            return false;
        }
        lease.share = duplicate_above(share->get(), m_first_private_fd);
    } else if (blocked_by_shares(lease)) {
        return false;
    }
    lease.socket = duplicate_above(bound->get(), m_first_private_fd);
    return true;
}

// A whole GPU's lease, just bound, is let go again while a share of it is bound: a MIG
// instance's, or another process's job's memory share (ours go on beside our own lease).
bool HostLeases::blocked_by_shares(Lease& lease) const
{
    const auto& prefix = lease.shares_prefix.empty() ? lease.memory_prefix : lease.shares_prefix;
    if (prefix.empty()) {
        return false;
    }
    const auto shares = bound_lease_names(prefix);
    if (!shares && (errno == EMFILE || errno == ENFILE)) {
        // A job short of descriptors waits for them, as for any other it needs.
        throw_errno("open /proc/net/unix");
    }
    if (!shares) {
        // Whether a share of it is held cannot be told now: not taken, for now.
        lease.blocker = prefix;
        lease.blocked = Blocker::mig_instance;
        return true;
    }
    for (const auto& name : *shares) {
        if (is_lease_share(m_space, name) && !own_share(lease, name)) {
            lease.blocker = name;
            lease.blocked = is_lease_memory_share(m_space, name) ? Blocker::memory_share
                                                                 : Blocker::mig_instance;
            return true;
        }
    }
    return false;
}

bool HostLeases::take(Lease& lease)
{
    if (lease.inherited >= 0) {
        // Whoever started us took these leases, and looked at the GPU and its instances then.
        lease.blocker = lease.name;
        lease.blocked = Blocker::own_name;
        lease.socket = duplicate_above(lease.inherited, m_first_private_fd);
        if (lease.share_inherited >= 0) {
            lease.share = duplicate_above(lease.share_inherited, m_first_private_fd);
        }
    } else if (!bind_names(lease)) {
        note_whole_wait(lease);
        return false;
    }
    lease.whole_wait.reset();
    lease.connection.reset();
    lease.retry = false;
    lease.record_size = 0;
    lease.taken_at = seconds_since_epoch();
    return true;
}

bool HostLeases::try_take(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    return lease.socket || take(lease);
}

int HostLeases::fd(GpuSlot slot) const
{
    const auto& lease = m_leases.at(slot);
    return lease.socket ? lease.socket.get() : -1;
}

void HostLeases::append_fds(GpuSlot slot, std::vector<int>& fds) const
{
    const auto& lease = m_leases.at(slot);
    if (lease.socket) {
        fds.push_back(lease.socket.get());
        if (lease.share) {
            fds.push_back(lease.share.get());
        }
    }
}

std::string HostLeases::blocked_by(GpuSlot slot) const
{
    const auto& lease = m_leases.at(slot);
    switch (lease.blocked) {
    case Blocker::whole_parent:
        return "its GPU " + lease.parent_key;
    case Blocker::mig_instance:
        return "a MIG instance of it";
    case Blocker::memory_share:
        return "a memory share of it";
    case Blocker::own_name:
        break;
    }
    return {};
}

void HostLeases::release(GpuSlot slot)
{
    auto& lease = m_leases.at(slot);
    lease.waiters.clear(); // they hang up, and take the lease or wait for its next holder
    lease.socket.reset();
    lease.share.reset();
    lease.record.reset();
}

void HostLeases::describe(GpuSlot slot, std::vector<LeaseHolder> jobs,
                          std::optional<std::size_t> queued)
{
    auto& lease = m_leases.at(slot);
    if (!lease.socket || lease.inherited >= 0) {
        return; // an inherited lease is described by the process that took it
    }
    const auto* directory = records();
    if (directory == nullptr) {
        return;
    }
    // A record file removed (or removed and made anew) is no longer read: write a new one.
    if (!lease.record || !directory->still_named(lease.record.get(), lease.key)) {
        auto opened = directory->open_record(lease.key);
        if (!opened.fd) {
            if (!std::exchange(lease.record_warned, true)) {
                spdlog::warn("GPU {}: no lease record written: {}", lease.key, opened.problem);
            }
            return;
        }
        lease.record = std::move(opened.fd);
        lease.record_size = 0;
    }
    auto text =
        format_lease_record(LeaseRecord{m_user, m_uid, static_cast<long>(getpid()), std::move(jobs),
                                        lease.taken_at, queued, m_used, m_weight});
    // One write, padded over the longer record it replaces: a reader never sees it empty.
    const auto written = text.size();
    if (text.size() < lease.record_size) {
        text.insert(text.size() - 1, lease.record_size - text.size(), ' ');
    } else if (lease.record_size == 0) {
        if (ftruncate(lease.record.get(), 0) != 0) {
            return; // information only
        }
    }
    if (pwrite(lease.record.get(), text.data(), text.size(), 0) ==
        static_cast<ssize_t>(text.size())) {
        lease.record_size = std::max(lease.record_size, written);
    }
}

LeaseOwner HostLeases::holder(GpuSlot slot) const
{
    const auto& lease = m_leases.at(slot);
    const auto* directory = m_records && !m_records->removed() ? &*m_records : nullptr;
    // A share has no record: the MIG instance it stands for is not known from its name, and a
    // memory share's holder keeps none.
    const auto& key = lease.blocked == Blocker::whole_parent ? lease.parent_key : lease.key;
    const bool shared =
        lease.blocked == Blocker::mig_instance || lease.blocked == Blocker::memory_share;
    return read_lease_owner(lease.blocker, lease.connection ? lease.connection.get() : -1,
                            shared ? nullptr : directory, key);
}

} // namespace gpusched::sys
