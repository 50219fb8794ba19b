#pragma once

#include <gpusched/queue/job_queue.hpp>
#include <gpusched/queue/redis_client.hpp>
#include <gpusched/sys/command_input.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>

namespace gpusched::queue {

struct WorkerSettings {
    RedisUrl url;
    std::string queue;
    std::optional<std::string> key; // run only jobs signed with it
    std::chrono::milliseconds lease_timeout{30'000};
    std::chrono::milliseconds timeout{2'000}; // of one Redis command or connection attempt
    std::string host;
    std::string gpus; // shown by `gpusched queue`
};

// A worker's input: jobs taken from the Redis queue, one at a time and only when a GPU is
// free to run it (BLMOVE into this worker's taken list, so a job is never in two places), and
// their results sent back. Heartbeats keep its jobs its own; a worker that goes silent has its
// jobs returned to the queue by the others. When Redis is unreachable it keeps running what it
// has and reconnects with backoff, keeping the results to send; it exits only once they are.
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

    void on_accepted(JobId id) override;
    void on_started(JobId id, const std::string& gpu) override;
    void on_ended(const sys::JobEnd& end) override;
    void on_unstarted(const std::vector<Command>& commands) override;
    bool settled() const override { return m_unsent.empty(); }

private:
    struct GiveBack {
        std::string id;
    };
    using Report = std::variant<JobResult, GiveBack>;

    bool up() const { return m_control.connected() && m_take.connected(); }
    void connect(Clock::time_point now);
    void lost(const std::string& why);
    void adopt_taken();
    // True when job `id` is ready or running here.
    bool is_known(const std::string& id) const;
    void take_arrived(const std::string& id);
    void send(Report report);
    bool try_send(const Report& report);
    void heartbeat();

    WorkerSettings m_settings;
    JobQueue m_queue;
    std::string m_worker;
    RedisClient m_control;
    RedisClient m_take;
    bool m_take_in_flight = false;
    bool m_stopped = false;
    std::chrono::milliseconds m_backoff{100};
    Clock::time_point m_next_connect{};
    Clock::time_point m_next_heartbeat{};
    bool m_outage_logged = false;

    std::deque<std::pair<std::string, sys::InputLine>> m_ready; // queue id, command
    std::string m_last_handed;
    std::unordered_map<JobId, std::string> m_queue_id_of;
    std::deque<Report> m_unsent;
};

} // namespace gpusched::queue
