#pragma once

#include <gpusched/queue/async_redis.hpp>
#include <gpusched/queue/job_queue.hpp>
#include <gpusched/queue/result_spool.hpp>
#include <gpusched/sys/command_input.hpp>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace gpusched::queue {

struct WorkerSettings {
    RedisUrl url;
    std::string queue;
    std::optional<std::string> key; // run only jobs signed with it
    std::chrono::milliseconds lease_timeout{30'000};
    std::chrono::milliseconds timeout{2'000}; // of one Redis command or connection attempt
    std::string host;
    std::string gpus; // shown by `gpusched queue`
    std::filesystem::path spool_directory;
    // Where the runner writes each job's output (--output-dir), whose last 64 KiB go with
    // the job's result; none with --tag. Files in a directory the worker chose itself are
    // removed once read.
    std::optional<std::filesystem::path> output_directory;
    bool output_directory_is_ours = false;
};

// A worker's input: jobs taken from the Redis queue, one at a time and only when a GPU is
// free to run it (BLMOVE into this worker's taken list, so a job is never in two places), and
// their results sent back. All its Redis traffic is asynchronous, driven by the runner's one
// poll, so nothing Redis does (dying, pausing, answering errors) delays a signal, a timeout
// or a job. Each result is written to the spool before it is sent; what could not be sent
// when the worker ends stays there for the next worker on the queue. Heartbeats keep its
// lease (its own --lease-timeout); the jobs of workers whose leases ran out go back to the
// queue. Failures are told apart (no connection, no answer in time, an error reply): each is
// logged once when it begins and once when it ends, and retried with a back-off that only a
// success resets.
class WorkerInput final : public sys::CommandInput {
public:
    explicit WorkerInput(WorkerSettings settings);
    ~WorkerInput() override;

    const std::string& worker_id() const { return m_worker; }
    // The GPUs it runs jobs on, shown by `gpusched queue` from the next heartbeat on.
    void set_gpus(std::string gpus) { m_settings.gpus = std::move(gpus); }

    void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) override;
    bool on_ready(const pollfd& ready) override;
    std::optional<Clock::time_point> next_deadline() const override;
    void on_time(Clock::time_point now) override;

    std::optional<sys::InputLine> next_line() override;
    bool finished() const override { return m_stopped; } // not before a signal
    bool has_unrepeatable_input() const override { return false; }
    // Takes no more jobs, and gives back at once those taken but not handed out.
    void stop_reading() override;
    std::vector<sys::InputLine> take_buffered() override;

    sys::InputRequests take_requests() override;

    void on_accepted(JobId id) override;
    void on_started(JobId id, const std::string& gpu) override;
    void on_ended(const sys::JobEnd& end) override;
    void on_unstarted(const std::vector<Command>& commands) override;
    std::string interrupted_fate() const override { return "returned to the queue"; }
    bool starts_wait_for_descriptors() const override { return true; }
    void on_jobs_over() override;
    bool settled() const override;

private:
    struct Ready {
        std::string id;
        std::string batch;
        std::string marker;
        std::string attempt; // how often it was queued again (`gpusched retry`)
        sys::InputLine line;
    };
    struct Handed {
        std::string id;
        std::string batch;
        std::string marker;
        std::string attempt;
    };

    bool connected() const { return m_control.ready() && m_take.ready(); }
    void connect();
    void on_up();
    void resync();
    void trouble(RedisFailure why, const std::string& error, const char* operation);
    void recovered(const char* operation);
    void on_heartbeat(const HeartbeatReply& reply);
    void check_marker(const std::string& marker);
    void adopt_taken();
    void take_arrived(const std::string& id);
    void fetched(const std::string& id, const std::string& marker, const QueuedJob& job);
    void refuse(const std::string& id, const std::string& batch, const std::string& marker,
                const std::string& why);
    void owe(std::string worker, std::variant<JobResult, GiveBack> what);
    void pump(bool resyncing = false);
    void send_owed(std::uint64_t number);
    void heartbeat();
    void look();
    void on_requests(const WorkerRequests& requests);
    JobResult ended_result(const Handed& handed, const sys::JobEnd& end) const;
    void leave();
    bool is_known(const std::string& id) const;
    std::string where() const;

    WorkerSettings m_settings;
    JobQueue m_queue;
    std::string m_worker;
    ResultSpool m_spool;
    AsyncRedis m_control;
    AsyncRedis m_take;

    // Health: synced once a heartbeat got through on the current connections.
    bool m_synced = false;
    std::optional<RedisFailure> m_trouble;
    std::string m_trouble_operation; // what failed: it must succeed to end the trouble
    Clock::time_point m_trouble_since{};
    std::optional<Clock::time_point> m_retry_at;
    std::chrono::milliseconds m_backoff;
    std::optional<Clock::time_point> m_next_heartbeat;
    bool m_heartbeat_in_flight = false;
    std::string m_marker; // the queue's, as first seen
    bool m_connect_logged = false;

    // What `gpusched cancel` and `pause` ask, looked at every second.
    std::optional<Clock::time_point> m_next_look;
    bool m_look_in_flight = false;
    bool m_looked = false; // nothing is taken before the first look says the queue runs
    std::set<std::string> m_paused;
    bool m_paused_changed = false;
    std::vector<JobId> m_to_stop;
    std::set<std::string> m_stop_asked;

    bool m_stopped = false;
    bool m_take_in_flight = false;
    std::set<std::string> m_fetching; // ids taken, their jobs being read
    std::deque<Ready> m_ready;
    std::optional<Handed> m_last_handed;
    std::unordered_map<JobId, Handed> m_handed;
    std::set<std::string> m_ran; // MARKER/ID of jobs run here: never run twice
    std::map<std::string, Clock::time_point> m_refetch_at; // jobs whose reads failed
    std::set<std::string> m_refused_reads;                 // ... said once each

    std::map<std::uint64_t, Owed> m_owed; // by spool number, in order
    std::set<std::uint64_t> m_in_flight;
    std::map<std::uint64_t, Clock::time_point> m_owed_retry_at; // after an error reply
    std::set<std::uint64_t> m_failing_owed;                     // ... said once each
    bool m_leaving = false; // the run ended: what is owed is sent, then the worker leaves
    bool m_left = false;
    bool m_leave_done = false;
    mutable bool m_said_spooled = false;
    std::optional<Clock::time_point> m_give_up_at;
};

} // namespace gpusched::queue
