#pragma once

#include <gpusched/queue/worker_store.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/time_source.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace gpusched::queue {

// A worker: the runner's input when it runs the jobs of a queue, whichever store keeps them.
// A job goes taken -> handed to the runner -> started -> ended -> recorded, or, taken but not
// started, back to the queue (the runner could not start it in the turn it was taken, or the
// worker stops). The rules are here, once, for both stores (docs/design/queue.md):
// - only what the runner can start now is taken (`begin_turn`), and what it did not take by
//   the end of the turn goes back, so that other workers can run it;
// - a job is never started twice by one worker (its run is remembered), nor run when its
//   record is gone or ended, its command holds a NUL byte, or its submitter is not trusted:
//   it is recorded as refused, with why;
// - a cancel stops a running job (recorded as cancelled while running) and ends a taken job
//   not yet started without running it (cancelled before it started);
// - a paused GPU starts no new job, a paused queue gives no new job; a pause read with a
//   take (or after it, before the job is handed) holds for the jobs taken: they go back;
// - a job a stop interrupted goes back to the queue, to run again elsewhere.
class QueueWorker final : public sys::CommandSource,
                          public sys::RunnerRequests,
                          public sys::JobEndSink {
public:
    // `host` names this machine in refusals; `clock` is the runner's.
    QueueWorker(std::unique_ptr<WorkerStore> store, std::string host,
                const TimeSource& clock = system_time());
    ~QueueWorker() override;

    const std::string& worker_id() const { return m_store->worker_id(); }
    // The GPUs it runs jobs on (comma-separated): a job asking for more is left to others.
    void set_gpus(std::string gpus);

    // The command source.
    void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) override;
    bool on_ready(const pollfd& ready) override;
    std::optional<Clock::time_point> next_deadline() const override;
    void on_time(Clock::time_point now) override;
    void begin_turn(std::size_t count) override;
    std::optional<sys::InputLine> next_line() override;
    void end_turn() override;
    bool finished() const override { return m_stopped; } // not before a signal
    bool has_unrepeatable_input() const override { return false; }
    void stop_reading() override;
    std::vector<sys::InputLine> take_buffered() override;
    std::vector<int> held_while_jobs_run() const override;
    bool starts_wait_for_descriptors() const override { return true; }

    // What the queue asks of the runner.
    sys::InputRequests take_requests() override;

    // Where the jobs' ends go.
    void on_accepted(JobId id) override;
    void on_started(JobId id, const std::string& gpu) override;
    void on_ended(const sys::JobEnd& end) override;
    void on_unstarted(const std::vector<Command>& commands) override;
    void on_returned(JobId id) override;
    std::string returned_to() const override { return "the queue"; }
    std::string interrupted_fate() const override { return "returned to the queue"; }
    void on_jobs_over() override;
    bool settled() const override;

private:
    // The store's news, for the worker.
    class StoreEvents final : public WorkerStore::Events {
    public:
        explicit StoreEvents(QueueWorker& worker) : m_worker(worker) {}
        void on_taken(TakenJob job) override { m_worker.admit(std::move(job)); }
        void on_cancel_asked(std::int64_t id) override { m_worker.cancel_asked(id); }
        void on_paused(const std::set<std::string>& paused) override { m_worker.paused(paused); }
        void on_stop_asked(bool now) override { m_worker.stop_asked(now); }
        void on_queue_reset() override { m_worker.m_ran.clear(); }

    private:
        QueueWorker& m_worker;
    };

    struct Handed {
        std::string run;
        bool started = false;
        bool cancel_asked = false; // before it started: stopped once it has
    };

    void admit(TakenJob job);
    void refuse(std::int64_t id, const std::string& why);
    void cancel_asked(std::int64_t id);
    void paused(const std::set<std::string>& paused);
    void stop_asked(bool now);
    void give_back_ready();
    bool is_known(std::int64_t id) const;

    std::unique_ptr<WorkerStore> m_store;
    StoreEvents m_events{*this};
    std::string m_host;
    const TimeSource& m_clock;

    bool m_stopped = false;
    bool m_looked = false; // nothing is taken before the first read of the pauses
    bool m_queue_paused = false;
    std::set<std::string> m_paused_gpus;
    bool m_paused_changed = false; // not yet told to the runner

    std::size_t m_gpu_count = 0; // 0 until set_gpus
    std::set<std::int64_t> m_too_big_said;
    std::optional<Clock::time_point> m_takes_held_until; // after a job asking for too many GPUs

    std::deque<TakenJob> m_ready; // taken, not yet handed to the runner
    std::optional<Handed> m_last_handed;
    std::unordered_map<JobId, Handed> m_handed; // by the runner's id, which is the queue's
    std::set<std::string> m_ran;                // runs started here: never started twice

    // How it was asked to stop, once the runner has been told (a stop now may follow a drain).
    std::optional<bool> m_stop_told;
    std::optional<bool> m_stop_to_tell;

    std::set<std::int64_t> m_cancels_said;
    std::set<JobId> m_stop_asked; // cancels passed to the runner
    std::vector<JobId> m_to_stop; // ... not yet taken by it
};

} // namespace gpusched::queue
