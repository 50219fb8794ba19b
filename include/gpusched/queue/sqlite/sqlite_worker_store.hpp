#pragma once

#include <gpusched/queue/failure_spell.hpp>
#include <gpusched/queue/sqlite/database_file.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/worker_presence.hpp>
#include <gpusched/queue/worker_store.hpp>
#include <gpusched/time_source.hpp>

#include <chrono>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>

#include <sys/types.h>
#include <unistd.h>

namespace gpusched::queue {

struct SqliteWorkerSettings {
    std::filesystem::path database;
    std::string queue;
    std::string host;
    std::string gpus; // shown by `gpusched queue`
    // Where the runner writes each job's output (--output-dir), for `gpusched logs`.
    std::string output_directory;
    // The runner's clock: the store's deadlines are kept in its time.
    const TimeSource* clock = &system_time();
};

// A worker's store in a local queue (an SQLite database). Jobs are taken in a transaction, so
// never by two workers, as many at once as the runner can start in a turn; a job's result is
// recorded in the same transaction as the next take when one follows in that turn (else
// before the worker sleeps); where it started is noted with the next write, within a tick.
// The worker sleeps in the runner's poll on its presence socket, which submitters, cancels
// and resumes connect to, and looks at the queue on its own every second too (for what a
// wake-up missed, for cancels, and to return the jobs of workers that died). Database calls
// wait at most a short busy timeout, so another process holding the write lock delays a
// signal or a job's start by no more than that; a failed write (a full disk, a lock held
// longer) is kept and tried again, and the run does not end before it is written (a result)
// or given up on (a start note, a give-back: a later look puts those right).
class SqliteWorkerStore final : public WorkerStore {
public:
    explicit SqliteWorkerStore(SqliteWorkerSettings settings);
    ~SqliteWorkerStore() override;

    void attach(Events& events) override;
    const std::string& worker_id() const override { return m_worker; }
    std::string where() const override;
    void set_gpus(std::string gpus) override;

    void add_poll_fds(std::vector<pollfd>& fds) override;
    bool on_ready(const pollfd& ready) override;
    std::optional<Clock::time_point> next_deadline() const override;
    void on_time(Clock::time_point now) override;

    void take(std::size_t count) override;
    void note_start(std::int64_t id, const std::string& gpu) override;
    void record(JobResult result) override;
    void give_back(std::int64_t id) override;
    void flush() override;

    std::vector<int> held_while_jobs_run() const override { return {m_presence.fd()}; }
    void leave() override;
    bool settled() const override;

private:
    // How many GPUs the worker has: no job asking for more is taken.
    std::int64_t gpu_count() const;
    // The jobs of `batch` (its origin read) ask for more GPUs than the worker has.
    bool asks_too_many_gpus(std::int64_t batch) const;

    struct GiveBackJob {
        std::int64_t id = 0;
    };
    struct StartNote {
        std::int64_t id = 0;
        std::string gpu;
        double started = 0;
    };
    // Writes the worker owes the queue, in the order they came.
    using Write = std::variant<JobResult, GiveBackJob, StartNote>;

    // Cancels of this worker's jobs and pauses, asked for since the last look.
    void look_for_requests();
    void expire_old_jobs();
    void reclaim_dead();
    void owe(Write write);
    void write_owed();
    void write_owed_items(); // inside a transaction
    void owed_written();
    // Whether an attempt only reads: a read works while another process holds the write
    // lock, so it ends only a spell that a read began.
    enum class Access { read, write };
    template <class Work>
    bool attempt(const char* doing, Access access, Work&& work);
    void check_database_file() const;
    // Reads where, with what and as whom the jobs of `batch` run, once (in a transaction).
    void read_origin(std::int64_t batch);
    // Why a job of `submitter` is not this worker's to run, if it is not.
    std::optional<std::string> not_ours(const Submitter& submitter) const;

    SqliteWorkerSettings m_settings;
    Events* m_events = nullptr;
    std::string m_worker;
    Database m_database;
    SqliteQueue m_queue;
    WorkerPresence m_presence;

    bool m_look = true; // the queue may hold a job for us
    Clock::time_point m_next_tick;
    Clock::time_point m_next_expiry;
    std::deque<Write> m_owed;
    bool m_flush = false; // m_owed holds more than starts
    FailureSpell m_spell; // a write that failed is tried again every second
    Access m_failing = Access::read;               // what began the spell
    std::optional<Clock::time_point> m_give_up_at; // for what is owed but results
    mutable bool m_said_waiting = false;            // for results at the end

    struct Origin {
        SharedJobContext context;
        Submitter submitter;
        std::optional<std::string> unreadable; // its request: its jobs are refused
    };
    std::unordered_map<std::int64_t, std::optional<Origin>> m_origins; // by batch
    std::set<std::int64_t> m_too_big_said; // jobs asking for more GPUs than the worker has
    uid_t m_uid = geteuid();
    std::optional<DatabaseFile> m_database_file; // as opened
};

} // namespace gpusched::queue
