#include <gpusched/queue/local_worker_input.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/local_queue_backend.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <utility>

namespace gpusched::queue {
namespace {

using namespace std::chrono_literals;

// How long a database call waits for another process's write lock before giving up for now:
// long enough for any transaction of the queue's (they are short), short enough that the
// runner's loop is never held up noticeably.
constexpr std::chrono::milliseconds k_busy_timeout{200};
// The worker looks at the queue on its own this often.
constexpr std::chrono::milliseconds k_tick{1'000};
// A write that failed is tried again after this.
constexpr std::chrono::milliseconds k_retry{1'000};
// At the end of the run, how long what is owed may keep failing before the worker gives up
// on it (the jobs then go back to the queue once this worker is gone, and run again).
constexpr std::chrono::seconds k_give_up{10};
// Ended jobs (their records and output) are kept this long, then a worker removes them.
constexpr std::chrono::hours k_keep_ended{7 * 24};
constexpr std::chrono::hours k_expiry_interval{1};

std::string new_worker_id(const std::string& host)
{
    std::random_device random;
    return fmt::format("{}{}-{:08x}", worker_id_prefix(host), getpid(), random());
}

} // namespace

LocalWorkerInput::LocalWorkerInput(LocalWorkerSettings settings)
    : m_settings(std::move(settings)), m_worker(new_worker_id(m_settings.host)),
      m_database(m_settings.database, k_busy_timeout), m_queue(m_database, m_settings.queue),
      m_presence((prepare_local_queue_schema(m_database), m_settings.database), m_worker),
      m_next_tick(Clock::now() + k_tick), m_next_expiry(Clock::now() + k_expiry_interval)
{
    // Present first, then listed: a worker listed is never taken for dead while it starts.
    m_queue.add_worker(
        {m_worker, m_settings.host, getpid(), m_settings.gpus, seconds_since_epoch()});
    reclaim_dead();
    look_for_requests();
    expire_old_jobs();
    spdlog::info("worker {} on queue {} ({})", m_worker, m_settings.queue,
                 m_settings.database.string());
}

LocalWorkerInput::~LocalWorkerInput()
{
    try {
        m_queue.remove_worker(m_worker);
    } catch (const std::exception& error) {
        // Its presence ends with it anyway: the next look at the queue forgets it.
        spdlog::debug("worker {} not removed from the list of workers: {}", m_worker,
                      error.what());
    }
}

void LocalWorkerInput::set_gpus(std::string gpus)
{
    m_settings.gpus = std::move(gpus);
    attempt("noting the worker's GPUs", [&] {
        m_queue.add_worker(
            {m_worker, m_settings.host, getpid(), m_settings.gpus, seconds_since_epoch()});
    });
}

template <class Work>
bool LocalWorkerInput::attempt(const char* doing, Work&& work)
{
    try {
        work();
        if (m_failing) {
            spdlog::info("queue {}: {} works again", m_settings.queue, *m_failing);
            m_failing.reset();
        }
        return true;
    } catch (const DatabaseError& error) {
        if (!m_failing) {
            spdlog::error("queue {}: {}: {}; trying again every {}", m_settings.queue, doing,
                          error.what(), format_duration(k_retry));
            m_failing = doing;
        }
        m_retry_at = Clock::now() + k_retry;
        return false;
    }
}

void LocalWorkerInput::reclaim_dead()
{
    attempt("returning the jobs of ended workers", [&] {
        // Nothing when who is present cannot be told now: the next tick looks again.
        const auto returned =
            reclaim_gone_workers(m_queue, m_settings.database, m_settings.host).value_or(0);
        if (returned > 0) {
            spdlog::warn("queue {}: {} of workers that ended went back to the queue",
                         m_settings.queue, counted(static_cast<std::size_t>(returned), "job"));
            m_look = true;
        }
    });
}

void LocalWorkerInput::add_poll_fds(std::vector<pollfd>& fds, bool wants_commands)
{
    m_wants_commands = wants_commands;
    m_wanted = 0; // a new turn: the runner says again what it can take
    if (!wants_commands && !m_ready.empty()) {
        give_back_ready();
    }
    if (wants_commands && !m_stopped && m_look && m_ready.empty() && !m_retry_at) {
        look();
    }
    if (m_flush && !m_retry_at) {
        write_owed(); // before the worker sleeps
    }
    fds.push_back({m_presence.fd(), POLLIN, 0});
}

void LocalWorkerInput::look()
{
    attempt("taking a job", [&] {
        // The results owed and as many jobs as the runner can start now go in one
        // transaction: one commit for every GPU that freed in this turn, not one per job
        // and per result. They are the worker's once committed: a rolled-back take is none.
        std::deque<JobRecord> taken;
        m_database.write([&] {
            write_owed_items();
            for (std::size_t i = 0; i < std::max<std::size_t>(m_wanted, 1); ++i) {
                auto job = m_queue.take(m_worker, m_settings.output_directory);
                if (!job) {
                    break;
                }
                taken.push_back(std::move(*job));
            }
        });
        owed_written();
        if (taken.empty()) {
            m_look = false; // until a wake-up or the next tick
            return;
        }
        std::move(taken.begin(), taken.end(), std::back_inserter(m_ready));
    });
}

void LocalWorkerInput::give_back_ready()
{
    // Each goes to the front of the queue: the last first, so that they keep their order.
    for (auto job = m_ready.rbegin(); job != m_ready.rend(); ++job) {
        owe(GiveBackJob{job->id});
    }
    m_ready.clear();
}

bool LocalWorkerInput::on_ready(const pollfd& ready)
{
    if (ready.fd != m_presence.fd()) {
        return false;
    }
    m_presence.drain();
    m_look = true;
    look_for_requests();
    return true;
}

std::optional<LocalWorkerInput::Clock::time_point> LocalWorkerInput::next_deadline() const
{
    if (m_wants_commands && !m_ready.empty() && !m_stopped) {
        // A job was just taken (the runner asks for poll descriptors before its deadline):
        // the poll must not sleep before the runner takes it.
        return Clock::time_point{};
    }
    auto next = m_next_tick;
    if (m_retry_at) {
        next = std::min(next, *m_retry_at);
    }
    return next;
}

void LocalWorkerInput::on_time(Clock::time_point now)
{
    if (m_retry_at && now >= *m_retry_at) {
        m_retry_at.reset();
        write_owed();
    }
    if (now >= m_next_tick) {
        m_next_tick = now + k_tick;
        if (!m_retry_at) {
            write_owed(); // the starts noted since the last write
        }
        m_look = true;
        reclaim_dead();
        look_for_requests();
    }
    if (now >= m_next_expiry) {
        m_next_expiry = now + k_expiry_interval;
        expire_old_jobs();
    }
}

void LocalWorkerInput::look_for_requests()
{
    attempt("reading cancels and pauses", [&] {
        // Asked again at every look until the job ends: one taken but not yet started when
        // the cancel came is stopped once it starts (the runner skips jobs already stopping).
        for (const auto id : m_queue.cancel_requests(m_worker)) {
            if (m_cancels_asked.insert(id).second) {
                spdlog::info("queue job {}: cancel asked", id);
            }
            m_requests.cancel.push_back(static_cast<JobId>(id));
        }
        auto paused = m_queue.paused();
        paused.erase(""); // the whole queue: take() starts nothing then
        if (paused != m_paused_gpus) {
            m_paused_gpus = paused;
            m_requests.paused_gpus = std::move(paused);
        }
    });
}

void LocalWorkerInput::expire_old_jobs()
{
    attempt("removing old ended jobs", [&] {
        const auto before =
            seconds_since_epoch() - std::chrono::duration<double>(k_keep_ended).count();
        if (const auto removed = purge_ended_jobs(m_queue, before); removed > 0) {
            spdlog::info("queue {}: {} removed: ended more than {} ago", m_settings.queue,
                         counted(static_cast<std::size_t>(removed), "job"), format_duration(k_keep_ended));
        }
    });
}

sys::InputRequests LocalWorkerInput::take_requests()
{
    return std::exchange(m_requests, {});
}

std::optional<sys::InputLine> LocalWorkerInput::next_line()
{
    // Asked for when a GPU is free, as soon as a job ended there: taken now, the next job
    // starts in the same turn of the loop, while the GPU's lease is still held (else the lease
    // is let go and taken again for every job).
    if (!m_stopped && m_look && m_ready.empty() && !m_retry_at) {
        look();
    }
    if (m_stopped || m_ready.empty()) {
        return std::nullopt;
    }
    auto job = std::move(m_ready.front());
    m_ready.pop_front();
    if (m_wanted > 0) {
        --m_wanted;
    }
    m_last_handed = job.id;
    if (job.command.find('\0') != std::string::npos) {
        // Never run: a shell would see only what comes before the NUL byte.
        spdlog::error("queue job {} refused, never run: the command contains a NUL byte", job.id);
        owe(LocalResult{job.id, JobState::refused, 0, 0, "", 0, 0, "NUL byte"});
        m_last_handed.reset();
        return std::nullopt;
    }
    // The queue's id is the job's number here too, in the log and the job log. Replayable: a
    // job not started here goes back to the queue, for another worker.
    const auto id = static_cast<JobId>(job.id);
    return sys::InputLine{LogicalLine{std::move(job.command), id, LineFault::none},
                          fmt::format("queue job {}", job.id), id, true};
}

void LocalWorkerInput::stop_reading()
{
    take_buffered();
}

std::vector<sys::InputLine> LocalWorkerInput::take_buffered()
{
    m_stopped = true;
    give_back_ready();
    return {};
}

void LocalWorkerInput::on_accepted(JobId id)
{
    if (m_last_handed) {
        m_handed[id] = *m_last_handed;
        m_last_handed.reset();
    }
}

void LocalWorkerInput::on_started(JobId id, const std::string& gpu)
{
    const auto found = m_handed.find(id);
    if (found == m_handed.end()) {
        return;
    }
    // Only for the listing: written with the next write, or at the next tick.
    owe(StartNote{found->second, gpu, seconds_since_epoch()});
}

void LocalWorkerInput::on_ended(const sys::JobEnd& end)
{
    const auto found = m_handed.find(end.id);
    if (found == m_handed.end()) {
        return;
    }
    const auto id = found->second;
    m_handed.erase(found);
    m_look = true; // a GPU is free: the queue may have the next job for it
    // Its result says where and when it started.
    std::erase_if(m_owed, [id](const Owed& owed) {
        const auto* start = std::get_if<StartNote>(&owed);
        return start != nullptr && start->id == id;
    });
    if (end.stopped && !end.cancelled && !end.outcome.succeeded()) {
        spdlog::info("queue job {} returned to the queue: the worker is stopping", id);
        owe(GiveBackJob{id});
        return;
    }
    m_cancels_asked.erase(id);
    const auto state = end.cancelled            ? JobState::cancelled
                       : end.outcome.succeeded() ? JobState::succeeded
                                                 : JobState::failed;
    owe(LocalResult{id, state, end.outcome.exit_code, end.outcome.signal, end.gpu, end.started,
                    end.runtime, end.cancelled ? "cancelled while running" : ""});
}

void LocalWorkerInput::on_unstarted(const std::vector<Command>& commands)
{
    for (const auto& command : commands) {
        if (const auto found = m_handed.find(command.id); found != m_handed.end()) {
            owe(GiveBackJob{found->second});
            m_handed.erase(found);
        }
    }
    take_buffered();
}

void LocalWorkerInput::owe(Owed owed)
{
    // A start waits for the next write; a result or a job given back is written before the
    // worker sleeps again, with the next take when there is one in the same turn.
    m_flush = m_flush || !std::holds_alternative<StartNote>(owed);
    m_owed.push_back(std::move(owed));
}

void LocalWorkerInput::write_owed()
{
    if (m_owed.empty()) {
        return;
    }
    attempt("recording results", [&] {
        m_database.write([&] { write_owed_items(); });
        owed_written();
    });
}

void LocalWorkerInput::write_owed_items()
{
    for (const auto& owed : m_owed) {
        if (const auto* result = std::get_if<LocalResult>(&owed)) {
            if (!m_queue.finish(m_worker, *result)) {
                spdlog::warn("queue job {}: its result was not recorded: the job is no longer "
                             "this worker's (cancelled, or returned to the queue)",
                             result->id);
            }
        } else if (const auto* start = std::get_if<StartNote>(&owed)) {
            m_queue.note_start(m_worker, start->id, start->gpu, start->started);
        } else {
            m_queue.give_back(m_worker, std::get<GiveBackJob>(owed).id);
        }
    }
}

void LocalWorkerInput::owed_written()
{
    m_owed.clear();
    m_flush = false;
}

void LocalWorkerInput::on_jobs_over()
{
    if (!m_retry_at) {
        write_owed();
    }
    if (!m_give_up_at) {
        m_give_up_at = Clock::now() + k_give_up;
    }
}

bool LocalWorkerInput::settled() const
{
    if (m_owed.empty()) {
        return true;
    }
    if (m_give_up_at && Clock::now() >= *m_give_up_at) {
        spdlog::error("queue {}: {} results could not be recorded; their jobs go back to the "
                      "queue and run again",
                      m_settings.queue, m_owed.size());
        return true;
    }
    return false;
}

} // namespace gpusched::queue
