#include <gpusched/sys/lease_state.hpp>

#include <gpusched/sys/lease_lock.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gpusched::sys {
namespace {

// Records are one short line; a longer file was not written by gpusched.
constexpr std::size_t k_longest_record = 64 * 1024;

bool process_alive(long pid)
{
    return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

} // namespace

std::optional<LeaseRecord> read_lease_record(int fd)
{
    std::string text(k_longest_record, '\0');
    const ssize_t got = pread(fd, text.data(), text.size(), 0);
    if (got <= 0) {
        return std::nullopt;
    }
    text.resize(static_cast<std::size_t>(got));
    return parse_lease_record(text);
}

LeaseState read_lease_state(const LockDirectory& directory, const std::string& key)
{
    LeaseState state;
    const auto fd = directory.open_lock_for_reading(key);
    if (!fd || !locked_by_another(fd->get())) {
        return state; // a record left in a free lock file is history, not a holder
    }
    state.leased = true;
    state.record = read_lease_record(fd->get());
    if (state.record) {
        std::erase_if(state.record->jobs,
                      [](const LeaseHolder& job) { return !process_alive(job.pid); });
    }
    return state;
}

} // namespace gpusched::sys
