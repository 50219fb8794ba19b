#include <gpusched/queue/queue_worker.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/sys/job_niceness.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace gpusched::queue {
namespace {

// How long a worker that was handed a job asking for more GPUs than it has takes no job.
constexpr auto k_too_big_pause = std::chrono::seconds(1);

} // namespace

QueueWorker::QueueWorker(std::unique_ptr<WorkerStore> store, std::string host,
                         const TimeSource& clock)
    : m_store(std::move(store)), m_host(std::move(host)), m_clock(clock)
{
    m_store->attach(m_events);
}

QueueWorker::~QueueWorker() = default;

void QueueWorker::add_poll_fds(std::vector<pollfd>& fds, bool /*wants_commands*/)
{
    m_store->add_poll_fds(fds);
}

bool QueueWorker::on_ready(const pollfd& ready)
{
    return m_store->on_ready(ready);
}

void QueueWorker::set_gpus(std::string gpus)
{
    m_gpu_count = gpus.empty() ? 0 : 1 + std::count(gpus.begin(), gpus.end(), ',');
    m_store->set_gpus(std::move(gpus));
}

std::optional<QueueWorker::Clock::time_point> QueueWorker::next_deadline() const
{
    auto deadline = m_store->next_deadline();
    if (m_takes_held_until && (!deadline || *m_takes_held_until < *deadline)) {
        deadline = m_takes_held_until;
    }
    return deadline;
}

void QueueWorker::on_time(Clock::time_point now)
{
    if (m_takes_held_until && now >= *m_takes_held_until) {
        m_takes_held_until.reset();
    }
    m_store->on_time(now);
}

void QueueWorker::begin_turn(std::size_t count)
{
    // Taken now, the next job starts in the same turn as the end of the one before, while
    // the GPU's lease is still held (else the lease is let go and taken again for every job).
    // What an asynchronous store took earlier and is ready now counts: the take asked for
    // is what the runner has room for beyond it, so the next take is under way while those
    // jobs start.
    if (count > m_ready.size() && !m_stopped && m_looked && !m_queue_paused &&
        !m_takes_held_until) {
        m_store->take(count - m_ready.size());
    }
}

std::optional<sys::InputLine> QueueWorker::next_line()
{
    if (m_stopped || m_ready.empty()) {
        return std::nullopt;
    }
    if (m_queue_paused || m_paused_changed) {
        // A pause read with the take, or just after it, holds for what was taken with it: the
        // runner learns of paused GPUs only at its next turn, so none of these jobs starts
        // now. They go back at the end of the turn, and the next take is what the runner can
        // start then.
        for (const auto& job : m_ready) {
            spdlog::info("queue job {} held, not started: {} as it was taken; it goes back to "
                         "the queue",
                         job.id, m_queue_paused ? "the queue was paused" : "GPUs were paused");
        }
        return std::nullopt;
    }
    auto job = std::move(m_ready.front());
    m_ready.pop_front();
    m_last_handed = Handed{std::move(job.run)};
    // The queue's id is the job's number here too, in the log and the job log. Replayable: a
    // job not started here goes back to the queue, for another worker.
    const auto id = static_cast<JobId>(job.id);
    return sys::InputLine{LogicalLine{std::move(job.command), job.line, LineFault::none},
                          fmt::format("queue job {}", job.id), id, true, false,
                          std::move(job.context)};
}

void QueueWorker::end_turn()
{
    // Taken, but the runner could not start them in this turn (a lease held elsewhere, a
    // process limit): other workers may.
    give_back_ready();
    m_store->flush();
}

void QueueWorker::give_back_ready()
{
    // Each goes to the front of the queue: the last first, so that they keep their order.
    for (auto job = m_ready.rbegin(); job != m_ready.rend(); ++job) {
        m_store->give_back(job->id);
    }
    m_ready.clear();
}

void QueueWorker::stop_reading()
{
    take_buffered();
}

std::vector<sys::InputLine> QueueWorker::take_buffered()
{
    m_stopped = true;
    give_back_ready();
    return {};
}

std::vector<int> QueueWorker::held_while_jobs_run() const
{
    return m_store->held_while_jobs_run();
}

bool QueueWorker::is_known(std::int64_t id) const
{
    return m_handed.contains(static_cast<JobId>(id)) ||
           std::any_of(m_ready.begin(), m_ready.end(),
                       [id](const TakenJob& ready) { return ready.id == id; });
}

void QueueWorker::refuse(std::int64_t id, const std::string& why)
{
    m_store->record(JobResult{id, JobState::refused, 0, 0, "", 0, 0, why});
}

void QueueWorker::admit(TakenJob job)
{
    // Read twice (a read lost with a connection, then the taken list read again): one copy
    // is enough.
    if (is_known(job.id)) {
        return;
    }
    if (m_stopped) {
        m_store->give_back(job.id);
        return;
    }
    switch (job.record) {
    case TakenJob::Record::missing:
        spdlog::warn("queue job {} is not in the queue (was the queue reset?); nothing to run",
                     job.id);
        refuse(job.id, "no such job");
        return;
    case TakenJob::Record::ended:
        // Run already, by a worker taken for gone that finished after all.
        spdlog::warn("queue job {} has ended already ({}); not running it again", job.id,
                     job.ended_as);
        refuse(job.id, "ended already");
        return;
    case TakenJob::Record::whole:
        break;
    }
    if (job.cancel_asked) {
        spdlog::info("queue job {} was cancelled before it started", job.id);
        m_store->record(
            JobResult{job.id, JobState::cancelled, 0, 0, "", 0, 0, "cancelled before it started"});
        return;
    }
    if (!job.run.empty() && m_ran.contains(job.run)) {
        spdlog::error("queue job {} was queued again after this worker ran it (its outcome was "
                      "removed?); refused, never run twice: {}",
                      job.id, shorten_command(job.command));
        refuse(job.id, "ran already on " + m_host);
        return;
    }
    if (job.command.find('\0') != std::string::npos) {
        // A shell would see only what comes before the NUL byte.
        spdlog::error("queue job {} refused, never run: the command contains a NUL byte", job.id);
        refuse(job.id, "NUL byte");
        return;
    }
    if (job.untrusted) {
        spdlog::error("queue job {} refused, never run: {}: {}", job.id, *job.untrusted,
                      shorten_command(job.command));
        refuse(job.id, *job.untrusted);
        return;
    }
    if (const auto nice = job.context ? job.context->request.nice : std::nullopt) {
        // nice(1) would start it at the worker's own niceness after a warning: not as asked.
        if (const auto possible = sys::check_niceness(*nice); !possible) {
            const auto why = fmt::format("--nice {}: {}", *nice, possible.message());
            spdlog::error("queue job {} refused, never run: {}: {}", job.id, why,
                          shorten_command(job.command));
            refuse(job.id, why);
            return;
        }
    }
    if (job.context) {
        // Never run elsewhere by accident: a job that cannot have its own directory fails.
        std::error_code error;
        if (!std::filesystem::is_directory(job.context->directory, error)) {
            const auto why = fmt::format("directory {} {} on {}", job.context->directory,
                                         error && error != std::errc::no_such_file_or_directory
                                             ? "cannot be read (" + error.message() + ")"
                                             : "does not exist",
                                         m_host);
            spdlog::error("queue job {} failed to start: {}: {}", job.id, why,
                          shorten_command(job.command));
            m_store->record(JobResult{job.id, JobState::failed, k_exit_spawn_failed, 0, "", 0, 0,
                                      "failed to start: " + why});
            return;
        }
        const auto gpus = job.context->request.gpus;
        if (m_gpu_count > 0 && !can_ever_run(job.context->request, m_gpu_count, {})) {
            // Left in the queue for a worker with that many GPUs, behind the jobs of its
            // priority (a store whose take cannot pass it by: Redis); this one takes nothing
            // for a moment, so as not to take it again at once when it is all there is.
            if (m_too_big_said.insert(job.id).second) {
                spdlog::warn("queue job {} asks for {} GPUs, this worker has {}: left in the "
                             "queue for a worker that has them",
                             job.id, gpus.value_or(1), m_gpu_count);
            }
            m_store->pass_by(job.id);
            m_takes_held_until = m_clock.now() + k_too_big_pause;
            return;
        }
    }
    m_ready.push_back(std::move(job));
}

void QueueWorker::cancel_asked(std::int64_t id)
{
    if (m_cancels_said.insert(id).second) {
        spdlog::info("queue job {}: cancel asked", id);
    }
    const auto ready = std::find_if(m_ready.begin(), m_ready.end(),
                                    [id](const TakenJob& job) { return job.id == id; });
    if (ready != m_ready.end()) {
        spdlog::info("queue job {} cancelled before it started", id);
        m_ready.erase(ready);
        m_cancels_said.erase(id);
        m_store->record(
            JobResult{id, JobState::cancelled, 0, 0, "", 0, 0, "cancelled before it started"});
        return;
    }
    const auto handed = m_handed.find(static_cast<JobId>(id));
    if (handed == m_handed.end()) {
        return;
    }
    if (!handed->second.started) {
        // The runner stops only a job that runs: it is stopped the moment it starts.
        handed->second.cancel_asked = true;
    } else if (m_stop_asked.insert(handed->first).second) {
        m_to_stop.push_back(handed->first);
    }
}

void QueueWorker::paused(const std::set<std::string>& paused)
{
    const bool queue_paused = paused.contains("");
    if (m_looked && queue_paused != m_queue_paused) {
        spdlog::info("queue {} {}", m_store->where(),
                     queue_paused ? "paused: taking no new job" : "resumed");
    } else if (!m_looked && queue_paused) {
        spdlog::info("queue {} paused: taking no new job", m_store->where());
    } else if (queue_paused) {
        // Each look that leaves the jobs where they are: what shows that a pause holds.
        spdlog::debug("queue {} looked at while paused: no job taken", m_store->where());
    }
    m_queue_paused = queue_paused;
    auto gpus = paused;
    gpus.erase("");
    if (gpus != m_paused_gpus) {
        m_paused_gpus = std::move(gpus);
        m_paused_changed = true;
    }
    m_looked = true;
}

void QueueWorker::stop_asked(bool now)
{
    // Told once each way: a drain, then perhaps a stop now.
    if (m_stop_told && (*m_stop_told || !now)) {
        return;
    }
    m_stop_told = now;
    m_stop_to_tell = now;
}

sys::InputRequests QueueWorker::take_requests()
{
    sys::InputRequests requests;
    requests.stop = std::exchange(m_stop_to_tell, std::nullopt);
    requests.cancel = std::exchange(m_to_stop, {});
    if (std::exchange(m_paused_changed, false)) {
        requests.paused_gpus = m_paused_gpus;
    }
    return requests;
}

void QueueWorker::on_accepted(JobId id)
{
    if (m_last_handed) {
        m_handed[id] = std::move(*m_last_handed);
        m_last_handed.reset();
    }
}

void QueueWorker::on_started(JobId id, const std::string& gpu)
{
    const auto found = m_handed.find(id);
    if (found == m_handed.end()) {
        return;
    }
    auto& handed = found->second;
    handed.started = true;
    if (!handed.run.empty()) {
        m_ran.insert(handed.run);
    }
    m_store->note_start(static_cast<std::int64_t>(id), gpu);
    if (handed.cancel_asked && m_stop_asked.insert(id).second) {
        m_to_stop.push_back(id);
    }
}

void QueueWorker::on_ended(const sys::JobEnd& end)
{
    const auto found = m_handed.find(end.id);
    if (found == m_handed.end()) {
        return;
    }
    m_handed.erase(found);
    m_stop_asked.erase(end.id);
    const auto id = static_cast<std::int64_t>(end.id);
    m_cancels_said.erase(id);
    if (end.stopped && !end.cancelled && !end.outcome.succeeded()) {
        spdlog::info("queue job {} returned to the queue: the worker is stopping", id);
        m_store->give_back(id);
        return;
    }
    const auto state = end.cancelled             ? JobState::cancelled
                       : end.outcome.succeeded() ? JobState::succeeded
                                                 : JobState::failed;
    JobResult result{id,
                     state,
                     end.outcome.exit_code,
                     end.outcome.signal,
                     end.gpu,
                     end.started,
                     end.runtime,
                     end.cancelled ? "cancelled while running" : ""};
    result.peak_memory = end.peak_memory;
    result.memory_reruns = end.memory_reruns;
    m_store->record(std::move(result));
}

// After the run's loop: a job accepted but never started goes back to the queue.
void QueueWorker::on_unstarted(const std::vector<Command>& commands)
{
    for (const auto& command : commands) {
        if (m_handed.erase(command.id) > 0) {
            m_store->give_back(static_cast<std::int64_t>(command.id));
        }
    }
    take_buffered();
}

void QueueWorker::on_returned(JobId id)
{
    if (m_handed.erase(id) > 0) {
        m_stop_asked.erase(id);
        m_store->give_back(static_cast<std::int64_t>(id));
    }
}

void QueueWorker::on_jobs_over()
{
    m_store->leave();
}

bool QueueWorker::settled() const
{
    return m_store->settled();
}

} // namespace gpusched::queue
