#include <gpusched/sys/lease_state.hpp>

#include <gpusched/sys/lease_socket.hpp>

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

LeaseOwner read_lease_owner(const std::string& name, int connection, const LockDirectory* directory,
                            const std::string& key)
{
    auto taker = connection >= 0 ? taker_of(connection) : ask_lease_taker(name);
    std::optional<LeaseRecord> record;
    if (directory != nullptr) {
        if (const auto fd = directory->open_record_for_reading(key)) {
            record = read_lease_record(fd->get());
        }
    }
    auto owner = identify_lease_owner(std::move(taker), std::move(record));
    if (owner.record) {
        std::erase_if(owner.record->jobs,
                      [](const LeaseHolder& job) { return !process_alive(job.pid); });
    }
    return owner;
}

} // namespace gpusched::sys
