#pragma once

#include <gpusched/queue/host_name.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

namespace gpusched::queue {

// A local queue's worker is present while it holds a listening abstract Unix socket named
// after the database and itself (worker_space, then the worker's id), as leases are held: the
// kernel frees the name when the worker's process ends, however it ends, so a worker's death
// is seen without heartbeats and without a file anyone could remove. The same socket wakes
// the worker: whoever changes the queue connects to it, and the worker, polling it, looks at
// the queue again. The socket is close-on-exec: a job's leftover process never keeps a dead
// worker present.
class WorkerPresence {
public:
    // Binds the worker's name; throws when it is taken (worker ids are made unique).
    WorkerPresence(const std::filesystem::path& database, const std::string& worker);

    // POLLIN when someone woke the worker.
    int fd() const { return m_socket.get(); }
    // Takes every wake-up waiting, so the next poll sleeps until the next one.
    void drain();

private:
    sys::UniqueFd m_socket;
};

// The space of the workers of the database at `database` (by device and inode, so that every
// path to the file meets the same workers); empty when the file cannot be looked at.
std::string worker_space_of(const std::filesystem::path& database);

// The workers present on a database: the names bound in its space. A worker is looked up by
// the name its id makes, not by reading names back to ids, so that a long id (a long host
// name), whose name is shortened with a hash, is found as well.
struct PresentWorkers {
    std::string space;
    std::set<std::string> names;
    bool contains(const std::string& worker) const;
};

// The workers present on the database; nothing when that cannot be told now (the database
// cannot be looked at, or the table of sockets read): no worker may then be taken for gone,
// or its running jobs would run a second time.
std::optional<PresentWorkers> present_workers(const std::filesystem::path& database);

class SqliteQueue;

// Puts the running jobs of this host's workers that are gone back at the front of `queue`,
// and returns how many; nothing when who is present cannot be told now (no job is returned
// then).
std::optional<std::int64_t> reclaim_gone_workers(SqliteQueue& queue,
                                                 const std::filesystem::path& database,
                                                 const std::string& host);

// How the ids of workers on `host` begin: a worker's id is HOST:PID:RANDOM, as on Redis.
std::string worker_id_prefix(const std::string& host);

// Presence is seen only in this machine's network namespace: a worker counts as gone only
// when it ran on this host (its recorded host, or its id's first part, is `host`) and its
// name is not bound. A worker of another host or container sharing the database is never
// taken for dead from here.
bool worker_gone(const std::string& worker_id, const std::string& worker_host,
                 const PresentWorkers& present, const std::string& host);

// Wakes every worker present on the database; errors are ignored (a worker that misses a
// wake-up still looks at the queue on its own, every second).
void wake_workers(const std::filesystem::path& database);

} // namespace gpusched::queue
