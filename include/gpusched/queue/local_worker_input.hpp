#pragma once

#include <gpusched/queue/local_queue.hpp>
#include <gpusched/queue/worker_presence.hpp>
#include <gpusched/sys/command_input.hpp>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>

namespace gpusched::queue {

struct LocalWorkerSettings {
    std::filesystem::path database;
    std::string queue;
    std::string host;
    std::string gpus; // shown by `gpusched queue`
    // Where the runner writes each job's output (--output-dir), for `gpusched logs`.
    std::string output_directory;
};

// A worker's input from a local queue: jobs are taken (in a transaction, so never by two
// workers) only when the runner can start them, as many at once as it can start in that turn
// of its loop, and a job's result is recorded when it ends, in the same transaction as the
// next take when one follows in that turn (else before the worker sleeps); where it started
// is noted with the next write, within a tick. The worker sleeps in the runner's poll on its
// presence socket, which submitters, cancels and resumes connect to, and looks at the queue
// on its own every second too (for what a wake-up missed, for cancels, and to return the jobs
// of workers that died). Database calls wait at most a short busy timeout, so another process
// holding the write lock delays a signal or a job's start by no more than that; a failed
// write (a full disk, a lock held longer) is kept and tried again, and the run does not end
// before it is written or given up on.
class LocalWorkerInput final : public sys::CommandInput {
public:
    explicit LocalWorkerInput(LocalWorkerSettings settings);
    ~LocalWorkerInput() override;

    const std::string& worker_id() const { return m_worker; }
    void set_gpus(std::string gpus);

    void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) override;
    bool on_ready(const pollfd& ready) override;
    std::optional<Clock::time_point> next_deadline() const override;
    void on_time(Clock::time_point now) override;

    void will_take(std::size_t count) override { m_wanted = count; }
    std::optional<sys::InputLine> next_line() override;
    sys::InputRequests take_requests() override;
    std::vector<int> held_while_jobs_run() const override { return {m_presence.fd()}; }
    bool finished() const override { return m_stopped; } // not before a signal
    bool has_unrepeatable_input() const override { return false; }
    void stop_reading() override;
    std::vector<sys::InputLine> take_buffered() override;

    void on_accepted(JobId id) override;
    void on_started(JobId id, const std::string& gpu) override;
    void on_ended(const sys::JobEnd& end) override;
    void on_unstarted(const std::vector<Command>& commands) override;
    std::string interrupted_fate() const override { return "returned to the queue"; }
    bool starts_wait_for_descriptors() const override { return true; }
    void on_jobs_over() override;
    bool settled() const override;

private:
    struct GiveBackJob {
        std::int64_t id = 0;
    };
    struct StartNote {
        std::int64_t id = 0;
        std::string gpu;
        double started = 0;
    };
    // Writes the worker owes the queue, in the order they came.
    using Owed = std::variant<LocalResult, GiveBackJob, StartNote>;

    void look();
    // Jobs taken that the runner cannot start now go back to the queue, for other workers.
    void give_back_ready();
    // Cancels of this worker's jobs and pauses of its GPUs, asked for since the last look.
    void look_for_requests();
    void expire_old_jobs();
    void reclaim_dead();
    void owe(Owed owed);
    void write_owed();
    void write_owed_items(); // inside a transaction
    void owed_written();
    template <class Work>
    bool attempt(const char* doing, Work&& work);

    LocalWorkerSettings m_settings;
    std::string m_worker;
    Database m_database;
    LocalQueue m_queue;
    WorkerPresence m_presence;

    bool m_stopped = false;
    bool m_look = true; // the queue may hold a job for us
    bool m_wants_commands = false;
    Clock::time_point m_next_tick;
    Clock::time_point m_next_expiry;
    sys::InputRequests m_requests;
    std::set<std::int64_t> m_cancels_asked;
    std::set<std::string> m_paused_gpus;
    std::deque<JobRecord> m_ready;
    // Jobs the runner can still take in this turn of its loop: taken in one transaction.
    std::size_t m_wanted = 0;
    std::optional<std::int64_t> m_last_handed;
    std::unordered_map<JobId, std::int64_t> m_handed;
    std::deque<Owed> m_owed;
    bool m_flush = false; // m_owed holds more than starts
    std::optional<Clock::time_point> m_retry_at;
    std::optional<std::string> m_failing; // said once until a write works again
    std::optional<Clock::time_point> m_give_up_at;
};

} // namespace gpusched::queue
