#include <gpusched/queue/sqlite/worker_presence.hpp>

#include <gpusched/lease_names.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/proc_files.hpp>

#include <fmt/format.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace gpusched::queue {

std::string worker_space_of(const std::filesystem::path& database)
{
    struct stat status {};
    if (stat(database.c_str(), &status) != 0) {
        return {};
    }
    return worker_space(fmt::format("{}:{}", status.st_dev, status.st_ino));
}

WorkerPresence::WorkerPresence(const std::filesystem::path& database, const std::string& worker)
{
    const auto space = worker_space_of(database);
    if (space.empty()) {
        throw std::runtime_error(fmt::format("database {}: cannot be looked at", database.string()));
    }
    auto bound = sys::bind_lease(lease_socket_name(space, worker));
    if (!bound) {
        throw std::runtime_error(fmt::format("worker {} is already present on {}", worker,
                                             database.string()));
    }
    m_socket = std::move(*bound);
}

void WorkerPresence::drain()
{
    while (true) {
        const int connection = accept4(m_socket.get(), nullptr, nullptr,
                                       SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (connection < 0) {
            return; // EAGAIN: none left (the socket is non-blocking)
        }
        sys::UniqueFd closed(connection);
    }
}

bool PresentWorkers::contains(const std::string& worker) const
{
    const auto name = lease_socket_name(space, worker);
    if (names.contains(name)) {
        return true;
    }
    // /proc/net/unix is read a page at a time, and a name can be missed while other sockets
    // come and go: one not listed is asked for itself before it counts as gone (its jobs
    // would be taken back while they run). A worker that cannot be asked (no descriptor
    // left) is not taken for gone either.
    try {
        return sys::lease_is_bound(name);
    } catch (const std::exception&) {
        return true;
    }
}

std::optional<PresentWorkers> present_workers(const std::filesystem::path& database)
{
    auto space = worker_space_of(database);
    if (space.empty()) {
        return std::nullopt;
    }
    auto bound = sys::bound_lease_names(space);
    if (!bound) {
        return std::nullopt;
    }
    return PresentWorkers{std::move(space), std::set<std::string>(bound->begin(), bound->end())};
}

namespace {

// A worker of this host in another network namespace (`unshare -n`) binds its presence
// where we cannot see it: while its process lives there, it is not gone. Its process: one
// that started before the worker joined the queue (a pid reused since cannot be it).
bool hidden_worker(const WorkerRecord& worker)
{
    const auto pid = static_cast<pid_t>(worker.pid);
    if (pid <= 0) {
        return false;
    }
    const auto started = sys::process_start_time(pid);
    constexpr double k_clock_tick_slack = 1.0;
    return started && *started <= worker.since + k_clock_tick_slack &&
           sys::in_another_network_namespace(pid);
}

} // namespace

std::optional<std::int64_t> reclaim_gone_workers(SqliteQueue& queue,
                                                 const std::filesystem::path& database,
                                                 const std::string& host)
{
    const auto present = present_workers(database);
    if (!present) {
        return std::nullopt;
    }
    return queue.reclaim([&](const WorkerRecord& worker) {
        return !worker_gone(worker.id, worker.host, *present, host) || hidden_worker(worker);
    });
}

std::string worker_id_prefix(const std::string& host)
{
    return host + ":";
}

namespace {

// How the ids of this host's workers began before they read HOST:PID:RANDOM as on Redis:
// the host with every byte but letters, digits and '-' made '-', then '-'.
std::string old_worker_id_prefix(const std::string& host)
{
    std::string prefix = host + "-";
    for (auto& c : prefix) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') {
            c = '-';
        }
    }
    return prefix;
}

} // namespace

bool worker_gone(const std::string& worker_id, const std::string& worker_host,
                 const PresentWorkers& present, const std::string& host)
{
    if (present.contains(worker_id)) {
        return false;
    }
    if (!worker_host.empty()) {
        return worker_host == host;
    }
    return worker_id.starts_with(worker_id_prefix(host)) ||
           worker_id.starts_with(old_worker_id_prefix(host));
}

void wake_workers(const std::filesystem::path& database)
{
    const auto space = worker_space_of(database);
    if (space.empty()) {
        return;
    }
    for (const auto& name : sys::bound_lease_names(space).value_or(std::vector<std::string>{})) {
        try {
            sys::connect_to_lease(name); // closed at once: the connection is the message
        } catch (const std::exception&) {
        }
    }
}

} // namespace gpusched::queue
