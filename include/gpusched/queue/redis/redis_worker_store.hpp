#pragma once

#include <gpusched/queue/failure_spell.hpp>
#include <gpusched/queue/redis/async_redis.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/queue/redis/result_spool.hpp>
#include <gpusched/queue/worker_store.hpp>
#include <gpusched/time_source.hpp>
#include <gpusched/sys/user_account.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>

namespace gpusched::queue {

struct RedisWorkerSettings {
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
    // The runner's clock: the store's deadlines are kept in its time.
    const TimeSource* clock = &system_time();
};

// A worker's store in a Redis queue: jobs are taken one at a time, and only when a GPU is
// free to run it (BLMOVE into this worker's taken list, so a job is never in two places), and
// their results sent back. All its Redis traffic is asynchronous, driven by the runner's one
// poll, so nothing Redis does (dying, pausing, answering errors) delays a signal, a timeout
// or a job. Each result is written to the spool before it is sent; what could not be sent
// when the worker ends stays there for the next worker on the queue. Heartbeats keep its
// lease (its own --lease-timeout); the jobs of workers whose leases ran out go back to the
// queue. Failures are told apart (no connection, no answer in time, an error reply): each is
// logged once when it begins and once when it ends, and retried with a back-off that only a
// success resets.
class RedisWorkerStore final : public WorkerStore {
public:
    explicit RedisWorkerStore(RedisWorkerSettings settings);
    ~RedisWorkerStore() override;

    void attach(Events& events) override { m_events = &events; }
    const std::string& worker_id() const override { return m_worker; }
    std::string where() const override;
    // Shown by `gpusched queue` from the next heartbeat on.
    void set_gpus(std::string gpus) override { m_settings.gpus = std::move(gpus); }

    void add_poll_fds(std::vector<pollfd>& fds) override;
    bool on_ready(const pollfd& ready) override;
    std::optional<Clock::time_point> next_deadline() const override;
    void on_time(Clock::time_point now) override;

    void take(std::size_t count) override;
    void note_start(std::int64_t id, const std::string& gpu) override;
    void record(JobResult result) override;
    void give_back(std::int64_t id) override;
    void pass_by(std::int64_t id) override;

    void leave() override;
    bool settled() const override;

private:
    // A job handed to the worker, and what the queue files its result under.
    struct Taken {
        std::string batch;
        std::string marker;
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
    void fetched(const std::string& id, const std::string& marker, const QueuedJob& job,
                 const std::string& context);
    // The context `encoded` when its digest is `digest`; none when it is not (changed, or
    // missing).
    SharedJobContext context_named(const std::string& digest, const std::string& encoded);
    void owe(std::string worker, std::variant<OwedResult, GiveBack> what);
    void pump(bool resyncing = false);
    void send_owed(std::uint64_t number);
    void heartbeat();
    void look();
    void on_requests(const WorkerRequests& requests);
    void attach_output(JobResult& result) const;
    void send_leave();
    bool is_known(const std::string& id) const;

    RedisWorkerSettings m_settings;
    Events* m_events = nullptr;
    RedisQueue m_queue;
    std::string m_worker;
    ResultSpool m_spool;
    AsyncRedis m_control;
    AsyncRedis m_take;

    // Health: synced once a heartbeat got through on the current connections.
    bool m_synced = false;
    std::optional<RedisFailure> m_trouble;
    std::string m_trouble_operation; // what failed last: it must succeed to end the trouble
    FailureSpell m_spell;            // said once; tried again from 0.1 s doubling to 5 s
    std::optional<Clock::time_point> m_next_heartbeat;
    bool m_heartbeat_in_flight = false;
    std::string m_marker; // the queue's, as first seen
    bool m_connect_logged = false;

    // What `gpusched cancel` and `pause` ask, looked at every second.
    std::optional<Clock::time_point> m_next_look;
    bool m_look_in_flight = false;
    std::set<std::string> m_paused;

    bool m_take_in_flight = false;
    std::set<std::string> m_fetching;                      // ids taken, their jobs being read
    std::map<std::int64_t, Taken> m_taken;                 // handed to the worker, not yet recorded
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
    std::map<std::string, SharedJobContext> m_contexts; // by digest: read and checked
    std::string m_last_context; // the digest of the context read last, not fetched again
    std::string m_user = sys::user_name(geteuid()); // whose worker it is, for listings
};

} // namespace gpusched::queue
