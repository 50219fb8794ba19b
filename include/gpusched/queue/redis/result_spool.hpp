#pragma once

#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpusched::queue {

// Something a worker owes the queue: a job's result, or a job it gives back unrun. `worker` is
// the worker that took the job (its taken list), which need not be the one that sends it.
struct GiveBack {
    std::int64_t id = 0;
    std::string marker; // the queue's marker when the job was taken
};
struct Owed {
    std::uint64_t number = 0;
    std::string worker;
    std::variant<OwedResult, GiveBack> what;
    bool spooled = false; // written whole to the spool file

    std::int64_t job_id() const;
};

// What a worker owes the queue, on disk: each result is written to the worker's spool file
// before it is sent, and marked sent once Redis has acknowledged it, so a worker stopped or
// killed while Redis is away loses nothing. The next worker on the same queue and spool
// directory sends what a dead worker still owed, once (a result is recorded once in Redis
// however often it is sent).
//
// Files: DIRECTORY/QUEUE-KEY/WORKER.spool (directories 0700, files 0600), one JSON object a
// line: {"n":N,"worker":W,"result":{...}} or {"n":N,"worker":W,"give_back":ID}, and {"sent":N}
// once sent. A worker holds an flock on its own file while it lives; a file nobody holds
// belongs to a worker that ended owing something. A file whose entries are all sent is cut
// to nothing.
class ResultSpool {
public:
    // The default directory: $XDG_STATE_HOME/gpusched/spool, else ~/.local/state/gpusched/spool.
    static std::filesystem::path default_directory();

    // Makes this worker's file (made under a name no other worker adopts, locked, then
    // renamed, so it is never taken for a dead worker's); an error names the path and the
    // call.
    ResultSpool(const std::filesystem::path& directory, const std::string& queue_key,
                const std::string& worker);

    const std::filesystem::path& path() const { return m_path; }

    // Writes an entry, numbering it; false when it could not be written (the error is
    // logged once, and the entry is still sent, only not safe from a crash). A write cut
    // short (a full disk) is cut off the file, so the lines after it stay whole.
    bool add(Owed& owed);
    void mark_sent(std::uint64_t number);
    std::size_t owed() const { return m_owed; }
    // Removes the file when nothing in it is owed: a worker that owes nothing leaves nothing.
    void close_if_settled();

    // The entries other workers left unsent, moved into this spool (numbered anew, their
    // worker kept), their files removed.
    std::vector<Owed> adopt_orphans();

private:
    bool append(const std::string& line);

    std::filesystem::path m_directory;
    std::filesystem::path m_path;
    sys::UniqueFd m_file;
    std::uint64_t m_next = 1;
    std::size_t m_owed = 0;
    bool m_failed = false;
};

} // namespace gpusched::queue
