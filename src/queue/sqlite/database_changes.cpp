#include <gpusched/queue/sqlite/database_changes.hpp>

#include <gpusched/sys/poll_timeout.hpp>

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>
#include <thread>

namespace gpusched::queue {
namespace {

// How long a wait lasts at most where no watch could be made.
constexpr auto k_unwatched_wait = std::chrono::milliseconds(20);
// How long the wait after one that saw a write lasts at most.
constexpr auto k_look_again_after = std::chrono::milliseconds(5);

} // namespace

DatabaseChanges::DatabaseChanges(const std::filesystem::path& database)
    : m_watch(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
      m_database_name(database.filename().string()), m_wal_name(m_database_name + "-wal")
{
    if (!m_watch) {
        return;
    }
    auto directory = database.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    if (inotify_add_watch(m_watch.get(), directory.c_str(),
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE |
                              IN_MOVED_FROM) < 0) {
        m_watch.reset();
    }
}

bool DatabaseChanges::wait(std::chrono::milliseconds most)
{
    const bool after_write = std::exchange(m_written, false);
    if (after_write) {
        most = std::min(most, k_look_again_after);
    }
    if (!m_watch) {
        std::this_thread::sleep_for(std::min(most, std::chrono::milliseconds(k_unwatched_wait)));
        return true; // it may have been: nothing tells
    }
    const auto deadline = std::chrono::steady_clock::now() + most;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd ready{m_watch.get(), POLLIN, 0};
        const int polled = poll(&ready, 1, sys::poll_timeout(left));
        if (polled < 0 && errno != EINTR) {
            return false;
        }
        if (polled <= 0) {
            // The time is up (or a signal came: the caller looks). After a write, a look is
            // due all the same: the one it woke may have come before the commit could be read,
            // and a follower that looks only when told (serve) would miss it until its next
            // timed look.
            return after_write;
        }
        // Other files of the directory (a worker's log, say) wake it too: only the database's
        // count.
        bool written = false;
        alignas(inotify_event) std::array<char, 4096> events{};
        ssize_t got = 0;
        while ((got = read(m_watch.get(), events.data(), events.size())) > 0) {
            for (ssize_t at = 0; at < got;) {
                const auto* event = reinterpret_cast<const inotify_event*>(events.data() + at);
                const std::string name = event->len > 0 ? event->name : "";
                written = written || name == m_wal_name || name == m_database_name;
                at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            }
        }
        if (written) {
            m_written = true;
            return true;
        }
    }
}

} // namespace gpusched::queue
