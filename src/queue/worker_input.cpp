#include <gpusched/queue/worker_input.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/queue/job_signature.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <random>

namespace gpusched::queue {
namespace {

constexpr std::chrono::milliseconds k_first_backoff{100};
constexpr std::chrono::milliseconds k_longest_backoff{5'000};

std::string new_worker_id(const std::string& host)
{
    std::random_device random;
    return fmt::format("{}:{}:{:08x}", host, getpid(), random());
}

} // namespace

WorkerInput::WorkerInput(WorkerSettings settings)
    : m_settings(std::move(settings)), m_queue(m_settings.queue),
      m_worker(new_worker_id(m_settings.host)), m_control(m_settings.url, m_settings.timeout),
      m_take(m_settings.url, m_settings.timeout)
{
    connect(Clock::now());
}

WorkerInput::~WorkerInput() = default;

void WorkerInput::connect(Clock::time_point now)
{
    if (!m_control.connect() || !m_take.connect()) {
        const auto& why = m_control.connected() ? m_take.error() : m_control.error();
        if (!std::exchange(m_outage_logged, true)) {
            spdlog::warn("queue {}: {}; trying again, then every {} at most", m_settings.queue, why,
                         format_duration(k_longest_backoff));
        }
        m_control.close();
        m_take.close();
        m_next_connect = now + m_backoff;
        m_backoff = std::min(m_backoff * 2, k_longest_backoff);
        return;
    }
    spdlog::info("worker {} on queue {} at {}", m_worker, m_settings.queue,
                 describe_redis_url(m_settings.url));
    m_outage_logged = false;
    m_backoff = k_first_backoff;
    m_take_in_flight = false;
    heartbeat();
    // Results first: a job whose result is sent is out of our taken list, not adopted again.
    while (up() && !m_unsent.empty() && try_send(m_unsent.front())) {
        m_unsent.pop_front();
    }
    if (up() && m_unsent.empty()) {
        adopt_taken();
    }
}

void WorkerInput::lost(const std::string& why)
{
    if (!std::exchange(m_outage_logged, true)) {
        spdlog::warn("queue {}: {}; reconnecting", m_settings.queue, why);
    }
    m_control.close();
    m_take.close();
    m_take_in_flight = false;
    m_next_connect = Clock::now() + m_backoff;
}

// A BLMOVE whose reply was lost with the connection still moved its job into our list: what
// is there and not known here is ours to run.
void WorkerInput::adopt_taken()
{
    const auto taken = m_queue.taken_by(m_control, m_worker);
    if (!taken) {
        return lost(m_control.error());
    }
    // On a reconnection every job we ran or run is known here; only a take whose reply was
    // lost is not.
    for (const auto& id : *taken) {
        if (!is_known(id)) {
            take_arrived(id);
        }
    }
}

bool WorkerInput::is_known(const std::string& id) const
{
    return std::any_of(m_ready.begin(), m_ready.end(),
                       [&](const auto& ready) { return ready.first == id; }) ||
           std::any_of(m_queue_id_of.begin(), m_queue_id_of.end(),
                       [&](const auto& entry) { return entry.second == id; });
}

void WorkerInput::heartbeat()
{
    m_next_heartbeat = Clock::now() + m_settings.lease_timeout / 3;
    const auto returned = m_queue.heartbeat(
        m_control, m_worker, fmt::format("{} GPUs {}", m_settings.host, m_settings.gpus),
        m_settings.lease_timeout.count());
    if (!returned) {
        return lost(m_control.error());
    }
    if (*returned > 0) {
        spdlog::warn("queue {}: returned {} jobs of silent workers to the queue", m_settings.queue,
                     *returned);
    }
}

void WorkerInput::add_poll_fds(std::vector<pollfd>& fds, bool wants_commands)
{
    if (!up()) {
        return;
    }
    if (wants_commands && !m_stopped && !m_take_in_flight && m_ready.empty()) {
        if (!m_queue.send_take(m_take, m_worker)) {
            return lost(m_take.error());
        }
        m_take_in_flight = true;
    }
    if (m_take_in_flight) {
        fds.push_back({m_take.fd(), POLLIN, 0});
    }
}

bool WorkerInput::on_ready(const pollfd& ready)
{
    if (!m_take_in_flight || ready.fd != m_take.fd()) {
        return false;
    }
    const auto reply = m_take.read_reply();
    if (!m_take.connected()) {
        lost(m_take.error());
        return true;
    }
    if (!reply) {
        return true; // the rest of the reply is still to come
    }
    m_take_in_flight = false;
    if (reply->type == RedisReply::Type::string) {
        take_arrived(reply->text);
    } else if (reply->is_error()) {
        lost(fmt::format("BLMOVE: {}", reply->text));
    }
    return true;
}

void WorkerInput::take_arrived(const std::string& id)
{
    const auto job = m_queue.fetch(m_control, id);
    if (!job) {
        return lost(m_control.error());
    }
    const auto& command = job->field("command");
    if (command.empty() || !job->field("outcome").empty()) {
        // Unknown, or already ended (run by a worker taken for dead that finished after all).
        send(JobResult{id, "failed", 0, 0, m_settings.host, "", 0, 0, "no such job"});
        return;
    }
    if (command.find('\0') != std::string::npos) {
        spdlog::error("queue job {} refused, never run: the command contains a NUL byte", id);
        send(JobResult{id, "refused", 0, 0, m_settings.host, "", 0, 0, "NUL byte"});
        return;
    }
    if (m_settings.key) {
        const auto& signature = job->field("sig");
        if (signature.empty() || !signature_matches(*m_settings.key, id, command, signature)) {
            const auto why = signature.empty() ? "unsigned" : "wrong signature";
            spdlog::error("queue job {} refused, never run: {}: {}", id, why,
                          shorten_command(command));
            send(JobResult{id, "refused", 0, 0, m_settings.host, "", 0, 0, why});
            return;
        }
    }
    // A worker taken for dead may be given back a job it still runs: one copy is enough.
    if (is_known(id)) {
        spdlog::warn("queue job {} is running here already; not starting it twice", id);
        return;
    }
    const auto seq = std::strtoull(job->field("seq").c_str(), nullptr, 10);
    // The queue's id is the job's number here too, in the log and the job log.
    // Replayable: a job not started here goes back to the queue, for another worker.
    m_ready.emplace_back(id, sys::InputLine{LogicalLine{command, seq, LineFault::none},
                                            fmt::format("queue job {}", id),
                                            std::strtoull(id.c_str(), nullptr, 10), true});
}

std::optional<WorkerInput::Clock::time_point> WorkerInput::next_deadline() const
{
    return up() ? m_next_heartbeat : m_next_connect;
}

void WorkerInput::on_time(Clock::time_point now)
{
    if (!up()) {
        if (now >= m_next_connect) {
            connect(now);
        }
        return;
    }
    if (now >= m_next_heartbeat) {
        heartbeat();
    }
}

std::optional<sys::InputLine> WorkerInput::next_line()
{
    if (m_stopped || m_ready.empty()) {
        return std::nullopt;
    }
    auto [id, line] = std::move(m_ready.front());
    m_ready.pop_front();
    m_last_handed = std::move(id);
    return std::move(line);
}

void WorkerInput::stop_reading()
{
    take_buffered();
}

std::vector<sys::InputLine> WorkerInput::take_buffered()
{
    m_stopped = true;
    for (auto& [id, line] : m_ready) {
        send(GiveBack{id});
    }
    m_ready.clear();
    return {};
}

void WorkerInput::on_accepted(JobId id)
{
    m_queue_id_of[id] = m_last_handed;
}

void WorkerInput::on_started(JobId id, const std::string& gpu)
{
    const auto found = m_queue_id_of.find(id);
    if (up() && found != m_queue_id_of.end() &&
        !m_queue.mark_started(m_control, found->second, m_worker, m_settings.host, gpu,
                              seconds_since_epoch())) {
        lost(m_control.error());
    }
}

void WorkerInput::on_ended(const sys::JobEnd& end)
{
    const auto found = m_queue_id_of.find(end.id);
    if (found == m_queue_id_of.end()) {
        return;
    }
    const auto id = found->second;
    m_queue_id_of.erase(found);
    if (end.stopped && !end.outcome.succeeded()) {
        spdlog::info("queue job {} returned to the queue: the worker is stopping", id);
        send(GiveBack{id});
        return;
    }
    send(JobResult{id, end.outcome.succeeded() ? "succeeded" : "failed", end.outcome.exit_code,
                   end.outcome.signal, m_settings.host, end.gpu, end.started, end.runtime, ""});
}

void WorkerInput::on_unstarted(const std::vector<Command>& commands)
{
    for (const auto& command : commands) {
        if (const auto found = m_queue_id_of.find(command.id); found != m_queue_id_of.end()) {
            send(GiveBack{found->second});
            m_queue_id_of.erase(found);
        }
    }
    take_buffered();
    // A take still blocked in Redis may have moved a job just now: stop it, then give back
    // whatever our list still holds, and leave the set of workers.
    m_take.close();
    m_take_in_flight = false;
    if (!m_control.connected()) {
        return;
    }
    if (const auto taken = m_queue.taken_by(m_control, m_worker)) {
        for (const auto& id : *taken) {
            send(GiveBack{id});
        }
    }
    if (m_unsent.empty()) {
        m_queue.forget_worker(m_control, m_worker);
    }
}

void WorkerInput::send(Report report)
{
    if (m_unsent.empty() && m_control.connected() && try_send(report)) {
        return;
    }
    m_unsent.push_back(std::move(report));
}

bool WorkerInput::try_send(const Report& report)
{
    const bool sent = std::visit(
        [&](const auto& what) {
            using What = std::decay_t<decltype(what)>;
            if constexpr (std::is_same_v<What, JobResult>) {
                return m_queue.finish(m_control, m_worker, what);
            } else {
                return m_queue.give_back(m_control, m_worker, what.id);
            }
        },
        report);
    if (!sent) {
        lost(m_control.error());
    }
    return sent;
}

} // namespace gpusched::queue
