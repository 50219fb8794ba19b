#include <gpusched/queue/redis/redis_worker_store.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/redis/job_signature.hpp>
#include <gpusched/sys/output_files.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>

namespace gpusched::queue {
namespace {

constexpr std::chrono::milliseconds k_first_backoff{100};
constexpr std::chrono::milliseconds k_longest_backoff{5'000};
// How long a worker whose jobs are over waits for Redis to take what it owes, when all of it
// is in the spool anyway.
constexpr std::chrono::milliseconds k_spooled_grace{500};
// How often a worker asks what `gpusched cancel` and `pause` want of it: soon enough for a
// person who waits for it, rare enough to cost Redis nothing.
constexpr std::chrono::milliseconds k_look_every{1'000};
// How much of each of a job's streams goes with its result, for `gpusched logs`.
constexpr std::uintmax_t k_tail_bytes = 64 * 1024;
// The submissions whose directory and environment a worker keeps read.
constexpr std::size_t k_contexts_kept = 64;

// The last k_tail_bytes of `path` ("" when it cannot be read), and whether that is all of it.
std::pair<std::string, bool> tail_of(const std::filesystem::path& path)
{
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) {
        return {"", true};
    }
    const auto size = static_cast<std::uintmax_t>(file.tellg());
    const auto from = size > k_tail_bytes ? size - k_tail_bytes : 0;
    file.seekg(static_cast<std::streamoff>(from));
    return {std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()),
            from == 0};
}

std::string random_word()
{
    std::random_device random;
    return fmt::format("{:08x}", random());
}

std::string new_redis_worker_id(const std::string& host)
{
    return fmt::format("{}:{}:{}", host, getpid(), random_word());
}

// One queue's place in the spool directory: the Redis address and the queue, as a file name.
std::string spool_key(const RedisUrl& url, const std::string& queue)
{
    auto host = url.host;
    std::replace_if(
        host.begin(), host.end(),
        [](char c) {
            return !(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-');
        },
        '_');
    return fmt::format("{}_{}_{}_{}", host, url.port, url.db, queue);
}

} // namespace

RedisWorkerStore::RedisWorkerStore(RedisWorkerSettings settings)
    : m_settings(std::move(settings)), m_queue(m_settings.queue),
      m_worker(new_redis_worker_id(m_settings.host)),
      m_spool(m_settings.spool_directory, spool_key(m_settings.url, m_settings.queue), m_worker),
      m_control(m_settings.url, m_settings.timeout, RedisQueue::scripts()),
      m_take(m_settings.url, m_settings.timeout, {}), m_spell(k_first_backoff, k_longest_backoff)
{
    for (auto& owed : m_spool.adopt_orphans()) {
        const auto number = owed.number;
        m_owed.emplace(number, std::move(owed));
    }
    connect();
}

RedisWorkerStore::~RedisWorkerStore()
{
    m_spool.close_if_settled();
    if (m_settings.output_directory_is_ours && m_settings.output_directory) {
        std::error_code error; // left when a file could not be removed
        std::filesystem::remove(*m_settings.output_directory, error);
    }
}

std::string RedisWorkerStore::where() const
{
    return fmt::format("{} at {}", m_settings.queue, describe_redis_url(m_settings.url));
}

void RedisWorkerStore::connect()
{
    m_synced = false;
    m_take_in_flight = false;
    m_heartbeat_in_flight = false;
    m_look_in_flight = false;
    m_fetching.clear();
    m_in_flight.clear();
    const auto down = [this](RedisFailure why, const std::string& error) {
        trouble(why, error, "connection");
    };
    m_control.connect([this] { on_up(); }, down);
    m_take.connect([this] { on_up(); }, down);
}

void RedisWorkerStore::on_up()
{
    if (connected()) {
        resync();
    }
}

// On a new connection, or after error replies: what is owed goes first (so a result a dead
// worker owed lands before any reclaim), then the marker, then a heartbeat, whose success
// makes the worker take jobs again.
void RedisWorkerStore::resync()
{
    pump(true);
    m_control.send(m_queue.open_marker(random_word() + random_word()), [this](RedisResult result) {
        if (result.ok() && result.reply->type == RedisReply::Type::string) {
            check_marker(result.reply->text);
            recovered("open");
        } else if (result.failure == RedisFailure::error_reply) {
            trouble(result.failure, result.error, "open");
        }
    });
    heartbeat();
}

// Redis fails the worker as a whole: a connection that broke or timed out, or an error reply
// to one of the worker's own commands (`operation`: a heartbeat, a take ...). Said once; tried
// again with a growing back-off until that operation succeeds.
void RedisWorkerStore::trouble(RedisFailure why, const std::string& error, const char* operation)
{
    const auto now = m_settings.clock->now();
    if (!m_spell.failing()) {
        spdlog::warn("queue {}: {}: {}; jobs running here go on, and their results wait in {} "
                     "until sent; trying again, every {} at most",
                     where(), describe_failure(why), error, m_spool.path().string(),
                     format_duration(m_spell.longest()));
    }
    m_trouble = why;
    m_trouble_operation = operation;
    m_synced = false;
    if (why != RedisFailure::error_reply) {
        // The other connection goes too: both are made again together.
        m_control.close(why, error);
        m_take.close(why, error);
        m_take_in_flight = false;
        m_heartbeat_in_flight = false;
        m_look_in_flight = false;
        m_fetching.clear();
        m_in_flight.clear();
    }
    m_spell.failed(now, operation);
}

// `operation` succeeded: the trouble it had is over (a heartbeat ends a connection's).
void RedisWorkerStore::recovered(const char* operation)
{
    const bool ends =
        m_trouble &&
        (m_trouble_operation == operation ||
         (*m_trouble != RedisFailure::error_reply && std::string_view(operation) == "heartbeat"));
    // A success when nothing failed resets the back-off too: it only grows while failing.
    const auto lasted = !m_trouble || ends ? m_spell.ended(m_settings.clock->now()) : std::nullopt;
    if (ends) {
        spdlog::info("queue {}: Redis answers again, after {}", where(),
                     format_duration(lasted.value_or(Clock::duration{})));
        m_trouble.reset();
    } else if (!m_trouble && !std::exchange(m_connect_logged, true)) {
        spdlog::info("worker {} on queue {}", m_worker, where());
    }
}

void RedisWorkerStore::heartbeat()
{
    if (m_heartbeat_in_flight || !m_control.ready()) {
        return;
    }
    m_heartbeat_in_flight = true;
    m_next_heartbeat = m_settings.clock->now() + m_settings.lease_timeout / 3;
    m_control.send(m_queue.heartbeat(m_worker,
                                     fmt::format("{} GPUs {}", m_settings.host, m_settings.gpus),
                                     m_settings.lease_timeout.count(), m_user),
                   [this](RedisResult result) {
                       m_heartbeat_in_flight = false;
                       if (!result.ok()) {
                           if (result.failure == RedisFailure::error_reply) {
                               trouble(result.failure, result.error, "heartbeat");
                           }
                           return;
                       }
                       const auto reply = RedisQueue::read_heartbeat(*result.reply);
                       if (!reply) {
                           trouble(RedisFailure::error_reply, "a heartbeat got an unexpected reply",
                                   "heartbeat");
                           return;
                       }
                       const bool was_synced = m_synced;
                       m_synced = true;
                       recovered("heartbeat");
                       on_heartbeat(*reply);
                       if (!was_synced) {
                           pump();
                           adopt_taken();
                           look();
                       }
                   });
}

void RedisWorkerStore::look()
{
    if (m_look_in_flight || !m_control.ready()) {
        return;
    }
    m_look_in_flight = true;
    m_next_look = m_settings.clock->now() + k_look_every;
    m_control.send(m_queue.requests(m_worker), [this](RedisResult result) {
        m_look_in_flight = false;
        if (!result.ok()) {
            if (result.failure == RedisFailure::error_reply) {
                trouble(result.failure, result.error, "look");
            }
            return;
        }
        if (const auto requests = RedisQueue::read_requests(*result.reply)) {
            recovered("look");
            on_requests(*requests);
        }
    });
}

void RedisWorkerStore::on_requests(const WorkerRequests& requests)
{
    m_paused = requests.paused;
    m_events->on_paused(m_paused);
    for (const auto& id : requests.cancel) {
        m_events->on_cancel_asked(std::strtoll(id.c_str(), nullptr, 10));
    }
    if (!requests.stop.empty()) {
        m_events->on_stop_asked(requests.stop == "now");
    }
}

void RedisWorkerStore::on_heartbeat(const HeartbeatReply& reply)
{
    check_marker(reply.marker);
    if (reply.next_expiry) {
        // Just after it: a lease that ran out is taken back as soon as it may be.
        const auto at =
            m_settings.clock->now() + *reply.next_expiry + std::chrono::milliseconds(50);
        m_next_heartbeat = std::min(*m_next_heartbeat, at);
    }
    for (const auto& worker : reply.expired) {
        if (worker == m_worker) {
            continue;
        }
        m_control.send(m_queue.reclaim(worker), [this, worker](RedisResult result) {
            if (!result.ok()) {
                if (result.failure == RedisFailure::error_reply) {
                    trouble(result.failure, result.error, "reclaim");
                }
                return;
            }
            recovered("reclaim");
            if (result.reply->integer > 0) {
                spdlog::warn("queue {}: returned {} of worker {} to the queue: its lease "
                             "ran out",
                             where(),
                             counted(static_cast<std::size_t>(result.reply->integer), "job"),
                             worker);
            }
        });
    }
}

// A queue whose marker is gone or changed was emptied under us: said loudly, once each time.
void RedisWorkerStore::check_marker(const std::string& marker)
{
    if (!marker.empty() && (m_marker.empty() || marker == m_marker)) {
        m_marker = marker;
        return;
    }
    if (!m_marker.empty()) {
        // Ids start again at 1 in the new queue: the old ones say nothing of the new jobs.
        m_events->on_queue_reset();
        spdlog::error("queue {} was reset (FLUSHALL, or Redis restarted without its data): the "
                      "jobs it held and their records are lost; submitters waiting for them "
                      "are told so",
                      where());
    }
    m_marker = marker;
    if (marker.empty()) {
        m_control.send(m_queue.open_marker(random_word() + random_word()),
                       [this](RedisResult result) {
                           if (result.ok() && result.reply->type == RedisReply::Type::string) {
                               m_marker = result.reply->text;
                           }
                       });
    }
}

// A take whose reply was lost with the connection still moved its job into our list: what
// is there and not known here is ours to run.
void RedisWorkerStore::adopt_taken()
{
    m_control.send(m_queue.taken(m_worker), [this](RedisResult result) {
        if (!result.ok()) {
            if (result.failure == RedisFailure::error_reply) {
                trouble(result.failure, result.error, "taken");
            }
            return;
        }
        recovered("taken");
        for (const auto& id : RedisQueue::to_strings(*result.reply)) {
            if (!is_known(id)) {
                take_arrived(id);
            }
        }
    });
}

bool RedisWorkerStore::is_known(const std::string& id) const
{
    const auto number = std::strtoll(id.c_str(), nullptr, 10);
    return m_fetching.contains(id) || m_refetch_at.contains(id) || m_taken.contains(number) ||
           std::any_of(m_owed.begin(), m_owed.end(),
                       [&](const auto& entry) { return entry.second.job_id() == number; });
}

void RedisWorkerStore::take(std::size_t /*count*/)
{
    // One job per take. While the whole queue is paused the worker asks for none; a take
    // already waiting in Redis finds the pause in the fetch script, which puts its job back.
    if (!m_synced || !m_take.ready() || m_take_in_flight || !m_fetching.empty()) {
        return;
    }
    m_take_in_flight = true;
    m_take.send(
        m_queue.take(m_worker),
        [this](RedisResult result) {
            m_take_in_flight = false;
            if (!result.ok()) {
                if (result.failure == RedisFailure::error_reply) {
                    trouble(result.failure, result.error, "take");
                }
                return;
            }
            recovered("take");
            if (result.reply->type == RedisReply::Type::string) {
                take_arrived(result.reply->text);
            }
        },
        true);
}

void RedisWorkerStore::add_poll_fds(std::vector<pollfd>& fds)
{
    m_control.add_poll_fds(fds);
    m_take.add_poll_fds(fds);
}

bool RedisWorkerStore::on_ready(const pollfd& ready)
{
    return m_control.on_ready(ready) || m_take.on_ready(ready);
}

void RedisWorkerStore::take_arrived(const std::string& id)
{
    m_refetch_at.erase(id);
    m_fetching.insert(id);
    const auto fetch = m_queue.fetch_taken(m_worker, id, m_last_context);
    m_control.send(fetch, [this, id](RedisResult result) {
        m_fetching.erase(id);
        const auto taken = result.ok() ? RedisQueue::read_taken(id, *result.reply) : std::nullopt;
        if (!taken) {
            // The id stays in our taken list: a connection's loss is retried by the next
            // resync, an error reply (this job's record may be damaged) on its own, once.
            if (result.failure == RedisFailure::error_reply || result.ok()) {
                if (!m_refused_reads.contains(id)) {
                    spdlog::error("queue job {} cannot be read: {}; trying again every {}", id,
                                  result.ok() ? "an unexpected reply" : result.error,
                                  format_duration(k_longest_backoff));
                    m_refused_reads.insert(id);
                }
                m_refetch_at[id] = m_settings.clock->now() + k_longest_backoff;
            }
            return;
        }
        m_refused_reads.erase(id);
        check_marker(taken->marker);
        if (taken->paused && !m_paused.contains("")) {
            m_paused.insert("");
            m_events->on_paused(m_paused);
        } else if (taken->paused_gpus && *taken->paused_gpus != m_paused) {
            // Read in the same script as the job: a GPU paused since the last look is known
            // before the job is, and the worker starts nothing there.
            m_paused = *taken->paused_gpus;
            m_events->on_paused(m_paused);
        }
        if (taken->ours) {
            fetched(id, taken->marker, taken->job, taken->context);
        }
    });
}

// What the queue holds of a job this worker took, for the worker to decide on.
void RedisWorkerStore::fetched(const std::string& id, const std::string& marker,
                               const QueuedJob& job, const std::string& context)
{
    // Read twice (a read lost with a connection, then the list adopted): one copy is enough.
    const auto number = std::strtoll(id.c_str(), nullptr, 10);
    if (m_taken.contains(number)) {
        return;
    }
    TakenJob taken;
    taken.id = number;
    taken.line = std::strtoull(job.field("seq").c_str(), nullptr, 10);
    taken.command = job.field("command");
    taken.run = marker + "/" + id + "/" + job.field("attempt");
    if (taken.command.empty()) {
        taken.record = TakenJob::Record::missing;
    } else if (!job.field("outcome").empty()) {
        // Run already, by a worker taken for dead that finished after all; or queued again.
        taken.record = TakenJob::Record::ended;
        taken.ended_as = job.field("outcome");
    }
    taken.cancel_asked = job.field("cancel") == "1";
    taken.submitter.user = job.field("user");
    taken.submitter.host = job.field("from");
    const auto& digest = job.field("context");
    if (m_settings.key) {
        const auto& signature = job.field("sig");
        const SignedJob signed_job{m_settings.queue,     id, job.field("attempt"),
                                   taken.command,        digest,
                                   taken.submitter.user, taken.submitter.host};
        if (signature.empty()) {
            taken.untrusted = "unsigned";
        } else if (!signature_matches(*m_settings.key, signed_job, signature)) {
            taken.untrusted = "wrong signature";
        }
    }
    if (!digest.empty() && !taken.untrusted && taken.record == TakenJob::Record::whole) {
        taken.context = context_named(digest, context);
        if (!taken.context) {
            taken.untrusted = "its directory and environment are missing or changed";
        }
    }
    m_taken[number] = Taken{job.field("batch"), marker};
    m_events->on_taken(std::move(taken));
}

SharedJobContext RedisWorkerStore::context_named(const std::string& digest,
                                                const std::string& encoded)
{
    if (const auto known = m_contexts.find(digest); known != m_contexts.end()) {
        m_last_context = digest;
        return known->second;
    }
    if (encoded.empty() || context_digest(encoded) != digest) {
        return nullptr;
    }
    auto context = decode_context(encoded);
    if (!context) {
        return nullptr;
    }
    // A worker may serve many submissions over its life: their environments are not all kept
    // (but the one read last, which fetches under way may have been told not to send).
    if (m_contexts.size() >= k_contexts_kept) {
        const auto last = m_contexts.find(m_last_context);
        auto kept = last != m_contexts.end() ? last->second : nullptr;
        m_contexts.clear();
        if (kept) {
            m_contexts.emplace(m_last_context, std::move(kept));
        }
    }
    auto shared = std::make_shared<const JobContext>(std::move(*context));
    m_contexts.emplace(digest, shared);
    m_last_context = digest;
    return shared;
}

std::optional<RedisWorkerStore::Clock::time_point> RedisWorkerStore::next_deadline() const
{
    std::optional<Clock::time_point> next;
    const auto earlier = [&next](std::optional<Clock::time_point> candidate) {
        if (candidate && (!next || *candidate < *next)) {
            next = candidate;
        }
    };
    earlier(m_control.next_deadline());
    earlier(m_take.next_deadline());
    earlier(m_spell.retry_at());
    if (m_synced) {
        earlier(m_next_heartbeat);
        earlier(m_next_look);
        for (const auto& [number, at] : m_owed_retry_at) {
            earlier(at);
        }
        for (const auto& [id, at] : m_refetch_at) {
            earlier(at);
        }
    }
    earlier(m_give_up_at);
    return next;
}

void RedisWorkerStore::on_time(Clock::time_point now)
{
    m_control.on_time(now);
    m_take.on_time(now);
    if (const auto retry = m_spell.retry_at(); retry && now >= *retry) {
        m_spell.retrying();
        if (connected()) {
            resync();
        } else {
            connect();
        }
    }
    if (m_synced && m_next_heartbeat && now >= *m_next_heartbeat) {
        heartbeat();
    }
    if (m_synced && m_next_look && now >= *m_next_look) {
        look();
    }
    if (m_synced) {
        pump();
        std::vector<std::string> due;
        for (const auto& [id, at] : m_refetch_at) {
            if (now >= at) {
                due.push_back(id);
            }
        }
        for (const auto& id : due) {
            take_arrived(id);
        }
    }
}

void RedisWorkerStore::note_start(std::int64_t id, const std::string& gpu)
{
    const auto taken = m_taken.find(id);
    if (!m_synced || taken == m_taken.end()) {
        return; // only `gpusched queue` shows where a job started
    }
    m_control.send(m_queue.start(m_worker, std::to_string(id), m_settings.host, gpu,
                                 seconds_since_epoch(), taken->second.marker),
                   [id](RedisResult result) {
                       if (result.ok() &&
                           read_taken_job_reply(*result.reply) == TakenJobReply::not_this_workers) {
                           spdlog::warn("queue job {} is no longer this worker's: it went back "
                                        "to the queue while this worker could not reach Redis, "
                                        "and may run elsewhere too",
                                        id);
                       }
                   });
}

void RedisWorkerStore::record(JobResult result)
{
    const auto taken = m_taken.find(result.id);
    Taken filed = taken != m_taken.end() ? taken->second : Taken{"", m_marker};
    if (taken != m_taken.end()) {
        m_taken.erase(taken);
    }
    if (!result.gpu.empty()) {
        attach_output(result); // it ran
    }
    owe(m_worker, OwedResult{std::move(result), m_settings.host, std::move(filed.batch),
                             std::move(filed.marker)});
}

void RedisWorkerStore::attach_output(JobResult& result) const
{
    if (!m_settings.output_directory) {
        return;
    }
    const auto job = static_cast<JobId>(result.id);
    const auto paths = sys::last_output_of(*m_settings.output_directory, job);
    auto [out, out_whole] = tail_of(paths.out);
    auto [err, err_whole] = tail_of(paths.err);
    result.out_tail = std::move(out);
    result.err_tail = std::move(err);
    result.complete = out_whole && err_whole;
    if (m_settings.output_directory_is_ours) {
        // Sent with the result: what is kept is in Redis from now on. Every attempt's files
        // go (with --retries, the earlier ones' too).
        sys::remove_output_of(*m_settings.output_directory, job);
    }
}

// After the worker left, whatever its taken list held went back to the queue already.
void RedisWorkerStore::give_back(std::int64_t id)
{
    const auto taken = m_taken.find(id);
    const auto marker = taken != m_taken.end() ? taken->second.marker : m_marker;
    if (taken != m_taken.end()) {
        m_taken.erase(taken);
    }
    if (!m_leave_done) {
        owe(m_worker, GiveBack{id, marker});
    }
}

// Not owed: if it is lost with a connection, the job is still in the taken list, read again
// at the resync, and passed by then.
void RedisWorkerStore::pass_by(std::int64_t id)
{
    const auto taken = m_taken.find(id);
    if (m_leave_done || taken == m_taken.end() || !m_control.ready()) {
        give_back(id);
        return;
    }
    const auto marker = taken->second.marker;
    m_taken.erase(taken);
    m_control.send(m_queue.pass_by(m_worker, std::to_string(id), marker), [](RedisResult) {});
}

// The last step of a worker: once everything owed is sent, whatever its taken list still
// holds goes back to the queue, and the worker leaves the set of workers.
void RedisWorkerStore::send_leave()
{
    if (m_left || !m_owed.empty() || !m_synced || !m_control.ready()) {
        return;
    }
    m_left = true;
    m_control.send(m_queue.reclaim(m_worker), [this](RedisResult result) {
        m_leave_done = true;
        if (result.ok() && result.reply->integer > 0) {
            spdlog::info("queue {}: gave back {} taken but not started", where(),
                         counted(static_cast<std::size_t>(result.reply->integer), "job"));
        }
    });
}

// The run takes no more jobs and none runs: the worker leaves. A take still blocked in Redis
// may move a job into our list up to its end: closing it ends it, and leaving returns
// whatever our list holds. What is owed gets the timeout to reach Redis; when Redis is away
// it stays in the spool, for the next worker on the queue.
void RedisWorkerStore::leave()
{
    if (m_leaving) {
        return;
    }
    m_leaving = true;
    // A Redis that answers takes a moment; a slow one is not waited for long when what is
    // owed is safe in the spool.
    const bool all_spooled = std::all_of(m_owed.begin(), m_owed.end(),
                                         [](const auto& entry) { return entry.second.spooled; });
    m_give_up_at = m_settings.clock->now() + (all_spooled ? k_spooled_grace : m_settings.timeout);
    m_take.close();
    m_take_in_flight = false;
    send_leave();
}

bool RedisWorkerStore::settled() const
{
    if (m_leave_done || (!m_leaving && m_owed.empty())) {
        return true;
    }
    if (!m_give_up_at) {
        return false;
    }
    const bool settle = (m_trouble && !connected()) || m_settings.clock->now() >= *m_give_up_at;
    if (settle && !m_owed.empty() && !std::exchange(m_said_spooled, true)) {
        std::vector<std::string> lost;
        for (const auto& [number, owed] : m_owed) {
            if (!owed.spooled) {
                lost.push_back(std::to_string(owed.job_id()));
            }
        }
        if (lost.size() < m_owed.size()) {
            spdlog::warn(
                "queue {}: {} not sent; kept in {}, for the next worker started on "
                "this queue here to send",
                where(),
                counted(m_owed.size() - lost.size(), "result or return", "results and returns"),
                m_spool.path().string());
        }
        if (!lost.empty()) {
            const bool one = lost.size() == 1;
            spdlog::error("queue {}: what {} {} {} the queue could be neither sent nor "
                          "spooled: {} again once {} lease runs out",
                          where(), one ? "job" : "jobs", fmt::join(lost, ", "),
                          one ? "owes" : "owe", one ? "it runs" : "they run",
                          one ? "its" : "their");
        }
    }
    return settle;
}

void RedisWorkerStore::owe(std::string worker, std::variant<OwedResult, GiveBack> what)
{
    Owed owed{0, std::move(worker), std::move(what)};
    m_spool.add(owed);
    const auto number = owed.number;
    m_owed.emplace(number, std::move(owed));
    if (m_synced && m_control.ready()) {
        send_owed(number);
    }
}

void RedisWorkerStore::pump(bool resyncing)
{
    if (!m_control.ready() || !(m_synced || resyncing)) {
        return;
    }
    const auto now = m_settings.clock->now();
    for (const auto& [number, owed] : m_owed) {
        const auto retry = m_owed_retry_at.find(number);
        if (!m_in_flight.contains(number) &&
            (retry == m_owed_retry_at.end() || now >= retry->second)) {
            send_owed(number);
        }
    }
}

void RedisWorkerStore::send_owed(std::uint64_t number)
{
    const auto& owed = m_owed.at(number);
    const auto command = std::visit(
        [&](const auto& what) {
            using What = std::decay_t<decltype(what)>;
            if constexpr (std::is_same_v<What, OwedResult>) {
                return m_queue.finish(owed.worker, what);
            } else {
                return m_queue.give_back(owed.worker, std::to_string(what.id), what.marker);
            }
        },
        owed.what);
    m_in_flight.insert(number);
    m_owed_retry_at.erase(number);
    m_control.send(command, [this, number](RedisResult result) {
        m_in_flight.erase(number);
        const auto found = m_owed.find(number);
        if (found == m_owed.end()) {
            return;
        }
        if (!result.ok()) {
            // An error reply to one job's result (its record damaged, say) is that job's: it
            // is said once and tried again on its own, and the rest goes on.
            if (result.failure == RedisFailure::error_reply) {
                if (m_failing_owed.insert(number).second) {
                    spdlog::error("queue job {}: its {} cannot be recorded: {}; trying again "
                                  "every {}",
                                  found->second.job_id(),
                                  std::holds_alternative<OwedResult>(found->second.what)
                                      ? "result"
                                      : "return to the queue",
                                  result.error, format_duration(k_longest_backoff));
                }
                m_owed_retry_at[number] = m_settings.clock->now() + k_longest_backoff;
            }
            return;
        }
        if (read_taken_job_reply(*result.reply) == TakenJobReply::queue_reset) {
            spdlog::warn("queue job {} belonged to the queue before it was reset; its {} is "
                         "dropped",
                         found->second.job_id(),
                         std::holds_alternative<OwedResult>(found->second.what) ? "result"
                                                                                : "return");
        }
        m_failing_owed.erase(number);
        m_owed.erase(found);
        m_spool.mark_sent(number);
        if (m_leaving) {
            send_leave();
        }
    });
}

} // namespace gpusched::queue
