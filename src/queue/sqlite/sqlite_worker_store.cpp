#include <gpusched/queue/sqlite/sqlite_worker_store.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/sqlite/database_ownership.hpp>
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

namespace gpusched::queue {
namespace {

using namespace std::chrono_literals;

// How long a database call waits for another process's write lock before giving up for now:
// long enough for any transaction of the queue's (they are short), short enough that the
// runner's loop is never held up noticeably.
constexpr std::chrono::milliseconds k_worker_busy_timeout{200};
// The worker looks at the queue on its own this often.
constexpr std::chrono::milliseconds k_tick{1'000};
// A write that failed is tried again after this.
constexpr std::chrono::milliseconds k_retry_every{1'000};
// At the end of the run, how long what is owed may keep failing before the worker gives up
// on it (the jobs then go back to the queue once this worker is gone, and run again).
constexpr std::chrono::seconds k_give_up{10};
// Ended jobs (their records and output) are kept this long, then a worker removes them.
constexpr std::chrono::hours k_keep_ended{7 * 24};
constexpr std::chrono::hours k_expiry_interval{1};
// The batches whose directory and environment a worker keeps read.
constexpr std::size_t k_origins_kept = 64;

std::string new_local_worker_id(const std::string& host)
{
    std::random_device random;
    return fmt::format("{}{}:{:08x}", worker_id_prefix(host), getpid(), random());
}

} // namespace

SqliteWorkerStore::SqliteWorkerStore(SqliteWorkerSettings settings)
    : m_settings(std::move(settings)), m_worker(new_local_worker_id(m_settings.host)),
      m_database(trusted_database_location(m_settings.database), k_worker_busy_timeout),
      m_queue(m_database, m_settings.queue),
      m_presence((prepare_sqlite_queue_schema(m_database), m_settings.database), m_worker),
      m_next_tick(m_settings.clock->now() + k_tick),
      m_next_expiry(m_settings.clock->now() + k_expiry_interval),
      m_spell(k_retry_every, k_retry_every)
{
    m_database_file = database_file(m_settings.database);
    // Present first, then listed: a worker listed is never taken for dead while it starts.
    m_queue.add_worker(
        {m_worker, m_settings.host, getpid(), m_settings.gpus, seconds_since_epoch(),
         sys::user_name(m_uid)});
    reclaim_dead();
    expire_old_jobs();
    spdlog::info("worker {} on queue {} ({})", m_worker, m_settings.queue,
                 m_settings.database.string());
}

SqliteWorkerStore::~SqliteWorkerStore()
{
    try {
        m_queue.remove_worker(m_worker);
    } catch (const std::exception& error) {
        // Its presence ends with it anyway: the next look at the queue forgets it.
        spdlog::debug("worker {} not removed from the list of workers: {}", m_worker, error.what());
    }
}

void SqliteWorkerStore::attach(Events& events)
{
    m_events = &events;
    look_for_requests();
}

std::string SqliteWorkerStore::where() const
{
    return fmt::format("{} ({})", m_settings.queue, m_settings.database.string());
}

bool SqliteWorkerStore::asks_too_many_gpus(std::int64_t batch) const
{
    const auto& origin = m_origins.at(batch);
    const auto& context = origin ? origin->context : nullptr;
    return context && !can_ever_run(context->request, static_cast<std::size_t>(gpu_count()), {});
}

std::int64_t SqliteWorkerStore::gpu_count() const
{
    if (m_settings.gpus.empty()) {
        return std::numeric_limits<std::int64_t>::max(); // not said yet: the runner says
    }
    return 1 + std::count(m_settings.gpus.begin(), m_settings.gpus.end(), ',');
}

void SqliteWorkerStore::set_gpus(std::string gpus)
{
    m_settings.gpus = std::move(gpus);
    attempt("noting the worker's GPUs", Access::write, [&] {
        m_queue.add_worker(
            {m_worker, m_settings.host, getpid(), m_settings.gpus, seconds_since_epoch(),
         sys::user_name(m_uid)});
    });
}

template <class Work>
bool SqliteWorkerStore::attempt(const char* doing, Access access, Work&& work)
{
    try {
        work();
        if (access == Access::write || m_failing == Access::read) {
            if (const auto lasted = m_spell.ended(m_settings.clock->now())) {
                spdlog::info("queue {}: the database works again, after {}", m_settings.queue,
                             format_duration(*lasted));
            }
        }
        return true;
    } catch (const DatabaseError& error) {
        if (m_spell.failed(m_settings.clock->now(), doing)) {
            m_failing = access;
            spdlog::error("queue {}: {}: {}; trying again every {}", m_settings.queue, doing,
                          error.what(), format_duration(k_retry_every));
        } else {
            spdlog::debug("queue {}: {}: {}, still", m_settings.queue, doing, error.what());
        }
        return false;
    }
}

void SqliteWorkerStore::reclaim_dead()
{
    // A write only when a worker ended: most looks only read.
    attempt("returning the jobs of ended workers", Access::read, [&] {
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

void SqliteWorkerStore::add_poll_fds(std::vector<pollfd>& fds)
{
    fds.push_back({m_presence.fd(), POLLIN, 0});
}

void SqliteWorkerStore::take(std::size_t count)
{
    if (!m_look || m_spell.retry_at()) {
        return;
    }
    attempt("taking a job", Access::write, [&] {
        // The results owed and as many jobs as the runner can start now go in one
        // transaction: one commit for every GPU that freed in this turn, not one per job
        // and per result. They are the worker's once committed: a rolled-back take is none.
        std::vector<JobRecord> taken;
        std::set<std::string> paused;
        // A worker may serve many batches over its life: their environments are not all
        // kept. Forgotten before a take, never during one, whose jobs' origins are read after.
        if (m_origins.size() >= k_origins_kept) {
            m_origins.clear();
        }
        m_database.write([&] {
            write_owed_items();
            // Read with the take: a GPU paused since the last look is known to the worker
            // before the jobs are, and it starts none there (the whole queue's pause the take
            // checks itself).
            paused = m_queue.paused();
            // The common take looks at no job's batch: only once it hands out a job asking for
            // more GPUs than this worker has is that job put back, and the take passes such
            // jobs by from then on.
            std::optional<std::int64_t> most_gpus;
            while (taken.size() < count) {
                auto job = m_queue.take(m_worker, m_settings.output_directory, most_gpus);
                if (!job) {
                    break;
                }
                read_origin(job->batch);
                if (!most_gpus && asks_too_many_gpus(job->batch)) {
                    if (m_too_big_said.insert(job->id).second) {
                        spdlog::warn("queue job {} asks for more GPUs than this worker has ({}): "
                                     "left in the queue for a worker that has them",
                                     job->id, gpu_count());
                    }
                    m_queue.untake(m_worker, job->id);
                    most_gpus = gpu_count();
                    continue;
                }
                taken.push_back(std::move(*job));
            }
        });
        owed_written();
        m_events->on_paused(paused);
        if (taken.empty()) {
            m_look = false; // until a wake-up or the next tick
            return;
        }
        for (auto& job : taken) {
            TakenJob next;
            next.id = job.id;
            next.line = static_cast<std::uint64_t>(job.id);
            next.command = std::move(job.command);
            if (const auto& origin = m_origins.at(job.batch)) {
                next.context = origin->context;
                next.submitter = origin->submitter;
                next.untrusted =
                    origin->unreadable ? origin->unreadable : not_ours(origin->submitter);
            }
            // No run: taken only while queued, in a transaction, a job is never taken twice.
            m_events->on_taken(std::move(next));
        }
    });
}

void SqliteWorkerStore::read_origin(std::int64_t batch)
{
    if (m_origins.contains(batch)) {
        return;
    }
    auto origin = m_queue.batch_origin(batch);
    if (!origin) {
        m_origins.emplace(batch, std::nullopt);
        return;
    }
    // No directory: a row made by hand, never run anywhere by accident; its user is checked.
    auto context = origin->context.directory.empty()
                       ? nullptr
                       : std::make_shared<const JobContext>(std::move(origin->context));
    m_origins.emplace(batch, Origin{std::move(context), std::move(origin->submitter),
                                    std::move(origin->unreadable)});
}

std::optional<std::string> SqliteWorkerStore::not_ours(const Submitter& submitter) const
{
    if (submitter.uid == static_cast<std::int64_t>(m_uid)) {
        return std::nullopt;
    }
    return fmt::format("submitted by {} (uid {}), and this worker runs as {} (uid {}): a worker "
                       "runs only its own user's jobs",
                       submitter.user, submitter.uid, sys::user_name(m_uid), m_uid);
}

bool SqliteWorkerStore::on_ready(const pollfd& ready)
{
    if (ready.fd != m_presence.fd()) {
        return false;
    }
    m_presence.drain();
    m_look = true;
    look_for_requests();
    return true;
}

std::optional<SqliteWorkerStore::Clock::time_point> SqliteWorkerStore::next_deadline() const
{
    auto next = m_next_tick;
    if (const auto retry = m_spell.retry_at()) {
        next = std::min(next, *retry);
    }
    return next;
}

void SqliteWorkerStore::on_time(Clock::time_point now)
{
    if (const auto retry = m_spell.retry_at(); retry && now >= *retry) {
        m_spell.retrying();
        write_owed();
    }
    if (now >= m_next_tick) {
        m_next_tick = now + k_tick;
        check_database_file();
        if (!m_spell.retry_at()) {
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

// A database removed (or replaced by another file) under a running worker would have it run
// on a file nobody else sees, and jobs recorded there would be lost to the queue: the worker
// stops, saying why. Its running jobs are stopped as by SIGTERM.
void SqliteWorkerStore::check_database_file() const
{
    const auto fate = fate_of(m_database_file, database_file(m_settings.database));
    if (fate == DatabaseFate::same) {
        return;
    }
    throw std::runtime_error(fmt::format(
        "{} while this worker ran: stopping (start a worker again to serve the {} database)",
        fate_message(m_settings.database, fate), fate == DatabaseFate::replaced ? "new" : "next"));
}

void SqliteWorkerStore::look_for_requests()
{
    attempt("reading cancels and pauses", Access::read, [&] {
        // Asked again at every look until the job ends: the worker tells a cancel it heard.
        for (const auto id : m_queue.cancel_requests(m_worker)) {
            m_events->on_cancel_asked(id);
        }
        m_events->on_paused(m_queue.paused());
        if (const auto now = m_queue.stop_asked(m_worker)) {
            m_events->on_stop_asked(*now);
        }
    });
}

void SqliteWorkerStore::expire_old_jobs()
{
    attempt("removing old ended jobs", Access::write, [&] {
        const auto before =
            seconds_since_epoch() - std::chrono::duration<double>(k_keep_ended).count();
        if (const auto removed = purge_ended_jobs(m_queue, before); removed > 0) {
            spdlog::info("queue {}: {} removed: ended more than {} ago", m_settings.queue,
                         counted(static_cast<std::size_t>(removed), "job"),
                         format_duration(k_keep_ended));
        }
    });
}

void SqliteWorkerStore::note_start(std::int64_t id, const std::string& gpu)
{
    // Only for the listing: written with the next write, or at the next tick.
    owe(StartNote{id, gpu, seconds_since_epoch()});
}

void SqliteWorkerStore::record(JobResult result)
{
    m_look = true; // a GPU is free: the queue may have the next job for it
    // Its result says where and when it started.
    std::erase_if(m_owed, [id = result.id](const Write& write) {
        const auto* start = std::get_if<StartNote>(&write);
        return start != nullptr && start->id == id;
    });
    owe(std::move(result));
}

void SqliteWorkerStore::give_back(std::int64_t id)
{
    owe(GiveBackJob{id});
}

void SqliteWorkerStore::owe(Write write)
{
    // A start waits for the next write; a result or a job given back is written before the
    // worker sleeps again, with the next take when there is one in the same turn.
    m_flush = m_flush || !std::holds_alternative<StartNote>(write);
    m_owed.push_back(std::move(write));
}

void SqliteWorkerStore::flush()
{
    if (m_flush && !m_spell.retry_at()) {
        write_owed();
    }
}

void SqliteWorkerStore::write_owed()
{
    if (m_owed.empty()) {
        return;
    }
    attempt("recording results", Access::write, [&] {
        m_database.write([&] { write_owed_items(); });
        owed_written();
    });
}

void SqliteWorkerStore::write_owed_items()
{
    for (const auto& write : m_owed) {
        if (const auto* result = std::get_if<JobResult>(&write)) {
            if (!m_queue.finish(m_worker, *result)) {
                spdlog::warn("queue job {}: its result was not recorded: the job is no longer "
                             "this worker's (cancelled, or returned to the queue)",
                             result->id);
            }
        } else if (const auto* start = std::get_if<StartNote>(&write)) {
            m_queue.note_start(m_worker, start->id, start->gpu, start->started);
        } else {
            m_queue.give_back(m_worker, std::get<GiveBackJob>(write).id);
        }
    }
}

void SqliteWorkerStore::owed_written()
{
    m_owed.clear();
    m_flush = false;
}

void SqliteWorkerStore::leave()
{
    if (!m_spell.retry_at()) {
        write_owed();
    }
    if (!m_give_up_at) {
        m_give_up_at = m_settings.clock->now() + k_give_up;
    }
}

bool SqliteWorkerStore::settled() const
{
    if (m_owed.empty()) {
        return true;
    }
    // A result is never given up: its job would run again (a job that succeeded, on a full
    // disk). What else is owed (a start to note, a job to give back) the next look at the
    // queue puts right once this worker is gone.
    const auto results = static_cast<std::size_t>(std::count_if(
        m_owed.begin(), m_owed.end(),
        [](const Write& write) { return std::holds_alternative<JobResult>(write); }));
    if (results == 0) {
        return m_give_up_at && m_settings.clock->now() >= *m_give_up_at;
    }
    if (m_give_up_at && m_spell.retry_at() && !std::exchange(m_said_waiting, true)) {
        spdlog::warn("queue {}: the {} cannot be recorded yet; the worker waits until {} (a "
                     "SIGKILL would leave {} to run again)",
                     m_settings.queue, results == 1 ? "result of a job" : counted(results, "result"),
                     results == 1 ? "it can" : "they can", results == 1 ? "it" : "them");
    }
    return false;
}

} // namespace gpusched::queue
