#include <gpusched/queue/redis/redis_submission.hpp>

#include "redis_connection.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/queue/redis/job_signature.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/queue/submitted_gpus.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace gpusched::queue {
namespace {

// Commands sent in one round trip.
constexpr std::size_t k_jobs_per_pipeline = 500;
// How long one command may take before the connection counts as lost: longer than the
// wait's blocking read, short enough that a server gone silent is noticed.
constexpr std::chrono::seconds k_command_timeout{5};
// Seconds one round of the wait blocks for ended jobs before the marker is checked again;
// well under the command timeout, which a blocked read must not reach.
constexpr double k_wait_round_s = 2;
// The ids a message names before it counts the rest.
constexpr std::size_t k_ids_named = 20;

// "3, 4, 7", the first 20 of them, then "and 12 more".
std::string list_ids(const std::vector<std::string>& ids)
{
    const auto named = std::min(ids.size(), k_ids_named);
    auto text =
        fmt::format("{}", fmt::join(ids.begin(), ids.begin() + static_cast<long>(named), ", "));
    if (ids.size() > named) {
        text += fmt::format(" and {} more", ids.size() - named);
    }
    return text;
}

double number_in(const std::string& text)
{
    return text.empty() ? 0 : std::atof(text.c_str());
}

// A job's hash, as its submitter reports its end.
EndedJob ended_job(const QueuedJob& job)
{
    EndedJob ended;
    auto& record = ended.record;
    record.id = std::strtoll(job.id.c_str(), nullptr, 10);
    record.command = job.field("command");
    record.state = job_state_named(job.field("outcome")).value_or(JobState::refused);
    record.gpu = job.field("gpu");
    record.started = number_in(job.field("started"));
    record.runtime = number_in(job.field("runtime"));
    record.exit_code = std::atoi(job.field("exit").c_str());
    record.signal = std::atoi(job.field("signal").c_str());
    record.note = job.field("note");
    record.peak_memory = peak_memory_of(job.field("peak"));
    ended.number = std::strtoull(job.field("seq").c_str(), nullptr, 10);
    ended.host = job.field("host");
    return ended;
}

class RedisSubmission final : public Submission {
    // Runs a queue operation (safe to repeat) under the retry policy, checking the marker
    // after a reconnection.
    template <class Operation>
    auto call(Operation operation)
    {
        return m_redis.with_retry(operation, [this] { check_marker_now(); });
    }

public:
    RedisSubmission(const RedisUrl& url, SubmissionSettings settings)
        : m_settings(std::move(settings)), m_queue(m_settings.queue),
          m_redis(url, k_command_timeout, RetryPolicy{m_settings.connect_timeout})
    {
        try {
            if (const auto connected = m_redis.connect(); !connected) {
                if (connected.kind() == FailureKind::refused) {
                    throw QueueRefused(connected.message());
                }
                throw QueueUnreachable(connected.message());
            }
            m_marker = m_redis.with_retry([&] { return m_queue.open(m_redis.client()); }, [] {});
            check_dependencies();
            m_batch = std::to_string(call([&] { return m_queue.new_batch(m_redis.client()); }));
            // Stored before any job names it: a worker never finds a job without it.
            const auto encoded = encode_context(m_settings.context);
            m_context = context_digest(encoded);
            call([&] { return m_queue.store_context(m_redis.client(), m_context, encoded); });
        } catch (const QueueUnreachable& error) {
            throw QueueUnreachable(fmt::format("{}; {}", error.what(), describe_submitted()));
        } catch (const QueueRefused& error) {
            throw QueueRefused(fmt::format("{}; {}", error.what(), describe_submitted()));
        }
    }

    std::size_t chunk_size() const override { return k_jobs_per_pipeline; }

    void add(const std::vector<CommandToQueue>& commands) override
    {
        try {
            submit(commands);
        } catch (const QueueUnreachable& error) {
            throw QueueUnreachable(fmt::format("{}; {}", error.what(), describe_submitted()));
        } catch (const QueueRefused& error) {
            throw QueueRefused(fmt::format("{}; {}", error.what(), describe_submitted()));
        }
    }

    void close() override
    {
        spdlog::info("{} submitted to queue {} at {} (batch {})", counted(m_ids.size(), "job"),
                     m_settings.queue, m_redis.address(), m_batch);
        say_if_other_gpus();
    }

    std::size_t size() const override { return m_ids.size(); }
    std::vector<std::int64_t> ids() const override
    {
        std::vector<std::int64_t> numbers;
        numbers.reserve(m_ids.size());
        for (const auto& id : m_ids) {
            numbers.push_back(std::strtoll(id.c_str(), nullptr, 10));
        }
        return numbers;
    }

    std::size_t wait(const std::function<bool(const EndedJob&)>& report) override;

private:
    // The jobs run on the GPUs of the workers that take them, whatever the submitter's
    // environment names: when no worker runs on those, say so (a hint: never throws).
    void say_if_other_gpus()
    {
        const auto& named = m_settings.gpus_named;
        const auto asked = m_settings.context.request.gpus;
        if ((!named && !asked) || m_ids.empty()) {
            return;
        }
        if (const auto workers = m_queue.workers(m_redis.client())) {
            if (const auto warning =
                    named ? other_gpus_warning(*named, m_settings.queue, *workers) : std::nullopt) {
                spdlog::warn("{}", *warning);
            }
            if (const auto warning =
                    too_few_gpus_warning(m_settings.context.request, m_settings.queue, *workers)) {
                spdlog::warn("{}", *warning);
            }
        }
    }

    // Each job waited for is one of the queue's: "12 13!" for the jobs' records.
    void check_dependencies()
    {
        std::vector<std::string> ids;
        for (const auto& dependency : m_settings.after) {
            ids.push_back(std::to_string(dependency.id));
            m_after += fmt::format("{}{}{}", m_after.empty() ? "" : " ", dependency.id,
                                   dependency.ok ? "!" : "");
        }
        if (ids.empty()) {
            return;
        }
        const auto found = call([&] { return m_queue.jobs(m_redis.client(), ids); });
        for (const auto& dependency : m_settings.after) {
            const auto id = std::to_string(dependency.id);
            if (std::none_of(found.jobs.begin(), found.jobs.end(),
                             [&id](const QueuedJob& job) { return job.id == id; })) {
                throw std::invalid_argument(fmt::format("--after{} {}: no job {} in queue {} at {}",
                                                        dependency.ok ? "-ok" : "", id, id,
                                                        m_settings.queue, m_redis.address()));
            }
        }
    }

    void submit(const std::vector<CommandToQueue>& commands)
    {
        if (commands.empty()) {
            return;
        }
        auto& client = m_redis.client();
        const auto size = static_cast<long long>(commands.size());
        const auto last = call([&] { return m_queue.reserve_ids(client, size); });
        std::vector<RedisQueue::NewJob> chunk;
        std::vector<std::string> ids;
        for (long long i = 0; i < size; ++i) {
            const auto& command = commands[static_cast<std::size_t>(i)];
            auto id = std::to_string(last - size + 1 + i);
            const auto& submitter = m_settings.submitter;
            auto signature =
                m_settings.key
                    ? sign_job(*m_settings.key,
                               SignedJob{m_settings.queue, id, "0", command.command, m_context,
                                         submitter.user, submitter.host})
                    : "";
            ids.push_back(id);
            chunk.push_back({std::move(id), command.command, std::to_string(command.number),
                             std::move(signature), m_context, submitter.user, submitter.host,
                             m_settings.context.directory, m_settings.name, m_after,
                             submitter.uid >= 0 ? std::to_string(submitter.uid) : "",
                             memory_asked_field(m_settings.context.request.memory)});
        }
        // They may be in the queue from now on.
        m_ids.insert(m_ids.end(), ids.begin(), ids.end());
        call([&] {
            return m_queue.submit(client, m_batch, chunk, m_settings.priority, m_settings.front);
        });
        // A reset between two chunks would leave this one in a queue without the others.
        check_marker();
        m_confirmed = m_ids.size();
    }

    // While it waits: a worker that ended without a word (SIGKILL, the OOM killer, a host
    // lost) holds its jobs until its lease runs out and someone reclaims them; with no other
    // worker, nobody would. The waiting submitter returns them to the queue, and says when no
    // worker serves it. Best effort: a failure here is the next round's to retry.
    void look_after_workers()
    {
        auto& redis = m_redis.client();
        if (const auto expired = m_queue.expired_workers(redis)) {
            for (const auto& worker : *expired) {
                if (const auto returned = m_queue.reclaim_now(redis, worker);
                    returned && *returned > 0) {
                    spdlog::warn("{} went back to queue {}: worker {} stopped answering (its "
                                 "lease ran out)",
                                 counted(static_cast<std::size_t>(*returned), "job"),
                                 m_settings.queue, worker);
                }
            }
        }
        const auto workers = m_queue.worker_count(redis);
        if (!workers) {
            return;
        }
        if (*workers == 0 && !std::exchange(m_said_unserved, true)) {
            spdlog::warn("no worker serves queue {} at {}: the jobs wait for `gpusched worker`",
                         m_settings.queue, m_redis.address());
        } else if (*workers > 0) {
            m_said_unserved = false;
        }
    }

    // Throws when the queue's marker is gone or changed.
    void check_marker()
    {
        const auto marker = call([&] { return m_queue.marker(m_redis.client()); });
        if (marker != m_marker) {
            reset();
        }
    }

    // After a reconnection: as check_marker(), but a connection lost again is left to the
    // retry that follows.
    void check_marker_now()
    {
        auto& redis = m_redis.client();
        const auto marker = m_queue.marker(redis);
        if (!marker) {
            if (marker.kind() == FailureKind::unreachable) {
                return; // lost again: the next try reconnects, and checks again
            }
            throw_redis_failure(m_redis.address(), marker.failure());
        }
        if (*marker != m_marker) {
            reset();
        }
    }

    [[noreturn]] void reset() const
    {
        const auto where = fmt::format("queue {} at {}", m_queue.name(), m_redis.address());
        if (m_ids.empty()) {
            // Nothing is lost, and the next submit starts afresh (the caller says nothing was
            // submitted).
            throw QueueUnreachable(fmt::format("{} was reset as this submit began", where));
        }
        const auto lost = m_waiting ? unreported() : m_ids;
        throw std::runtime_error(
            fmt::format("{} was reset after these jobs were submitted; {} lost: {}{}", where,
                        counted(lost.size(), "job"), list_ids(lost),
                        m_waiting ? "" : "; nothing more was submitted"));
    }

    // What a submission cut short left behind: "nothing was submitted", or which ids were.
    std::string describe_submitted() const
    {
        if (m_ids.empty()) {
            return "nothing was submitted";
        }
        std::string text;
        if (m_confirmed > 0) {
            const std::vector<std::string> in(m_ids.begin(),
                                              m_ids.begin() + static_cast<long>(m_confirmed));
            text = fmt::format("{} {} submitted to queue {} (queue ids {}), ",
                               counted(in.size(), "job"), in.size() == 1 ? "was" : "were",
                               m_queue.name(), list_ids(in));
        }
        if (m_confirmed < m_ids.size()) {
            const std::vector<std::string> maybe(m_ids.begin() + static_cast<long>(m_confirmed),
                                                 m_ids.end());
            text += fmt::format("{} may have been (queue ids {}), ",
                                m_confirmed > 0 ? fmt::format("{} more", maybe.size())
                                                : counted(maybe.size(), "job"),
                                list_ids(maybe));
        }
        return text + "the rest of the input was not submitted";
    }

    std::vector<std::string> unreported() const
    {
        std::vector<std::string> ids;
        std::copy_if(m_ids.begin(), m_ids.end(), std::back_inserter(ids),
                     [&](const std::string& id) { return !m_reported.contains(id); });
        return ids;
    }

    SubmissionSettings m_settings;
    RedisQueue m_queue;
    RedisConnection m_redis;
    std::string m_marker;
    std::string m_batch;
    std::string m_context; // the digest of the jobs' context
    std::string m_after;   // what they wait for, as their records say it
    bool m_said_unserved = false;
    std::vector<std::string> m_ids; // in the order submitted
    std::size_t m_confirmed = 0;    // known to be in the queue
    bool m_waiting = false;
    std::set<std::string> m_reported; // ended, or lost
    std::vector<std::string> m_lost;  // the record gone though the queue was not reset
};

std::size_t RedisSubmission::wait(const std::function<bool(const EndedJob&)>& report)
{
    m_waiting = true;
    auto& redis = m_redis.client();
    std::size_t failed = 0;
    // After a lost connection, the ids whose reply was lost with it are found among all those
    // that ended.
    bool resync = false;
    try {
        while (m_reported.size() < m_ids.size()) {
            check_marker();
            std::vector<std::string> ended;
            if (resync) {
                ended = call([&] { return m_queue.ended_ids(redis, m_batch); });
            } else {
                auto round = m_queue.wait_ended(redis, m_batch, k_wait_round_s);
                if (!round) {
                    if (round.kind() != FailureKind::unreachable) {
                        throw_redis_failure(m_redis.address(), round.failure());
                    }
                    resync = true;
                    continue; // check_marker() reconnects
                }
                ended = std::move(*round);
            }
            resync = false;
            for (const auto& id : ended) {
                if (m_reported.contains(id)) {
                    continue;
                }
                const auto job = call([&] { return m_queue.fetch(redis, id); });
                if (job.fields.empty()) {
                    check_marker(); // a reset explains it
                    spdlog::error("queue job {} is lost: its record is gone from queue {} at {}",
                                  id, m_queue.name(), m_redis.address());
                    m_lost.push_back(id);
                } else if (!report(ended_job(job))) {
                    ++failed;
                }
                m_reported.insert(id);
            }
            look_after_workers();
        }
    } catch (const QueueUnreachable& error) {
        const auto unknown = unreported();
        throw QueueUnreachable(
            fmt::format("{}; the outcome of {} is unknown: {} (they stay queued and may still run; "
                        "`gpusched queue` shows them once Redis is back)",
                        error.what(), counted(unknown.size(), "job"), list_ids(unknown)));
    }
    if (!m_lost.empty()) {
        throw std::runtime_error(fmt::format("{} lost: their records are gone from queue {} "
                                             "at {}: {}",
                                             counted(m_lost.size(), "job"), m_queue.name(),
                                             m_redis.address(), list_ids(m_lost)));
    }
    return failed;
}

} // namespace

std::unique_ptr<Submission> open_redis_submission(const RedisUrl& url, SubmissionSettings settings)
{
    return std::make_unique<RedisSubmission>(url, std::move(settings));
}

} // namespace gpusched::queue
