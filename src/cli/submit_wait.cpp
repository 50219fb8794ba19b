#include "submit_wait.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/job_messages.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace gpusched::cli {
namespace {

// Seconds one round of the wait blocks for ended jobs before the marker is checked again;
// well under the connection's timeout, which a blocked read must not reach.
constexpr double k_wait_round_s = 2;

// The ids a message names before it counts the rest.
constexpr std::size_t k_ids_named = 20;

// Logs the end of a job; true when it succeeded.
bool report_end(const queue::QueuedJob& job)
{
    const auto& outcome = job.field("outcome");
    const auto runtime = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::atof(job.field("runtime").c_str())));
    const JobOutcome result{std::atoi(job.field("exit").c_str()),
                            std::atoi(job.field("signal").c_str())};
    const auto where = fmt::format("{} GPU {}", job.field("host"), job.field("gpu"));
    const auto command = shorten_command(job.field("command"));
    // The job's place in this submission, and its id in the queue (and in workers' logs).
    const auto name = fmt::format("{} (queue job {})", job.field("seq"), job.id);
    if (outcome == "succeeded") {
        spdlog::info("job {} finished on {}: {} after {}: {}", name, where,
                     describe_outcome(result), format_duration(runtime), command);
        return true;
    }
    if (outcome == "refused") {
        spdlog::error("job {} refused by worker on {}: {}: {}", name, job.field("host"),
                      job.field("note"), command);
        return false;
    }
    spdlog::warn("job {} failed on {}: {} after {}: {}", name, where, describe_outcome(result),
                 format_duration(runtime), command);
    return false;
}

} // namespace

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

Submission::Submission(RedisConnection& redis, const queue::RedisQueue& jobs)
    : m_redis(redis), m_jobs(jobs)
{
}

void Submission::open()
{
    m_marker = m_redis.with_retry([&] { return m_jobs.open(m_redis.client()); }, [] {});
}

void Submission::check_marker()
{
    const auto marker = call([&] { return m_jobs.marker(m_redis.client()); });
    if (marker != m_marker) {
        reset();
    }
}

void Submission::check_marker_now()
{
    auto& redis = m_redis.client();
    const auto marker = m_jobs.marker(redis);
    if (!marker) {
        if (!redis.connected()) {
            return; // lost again: the next try reconnects, and checks again
        }
        throw std::runtime_error(fmt::format("{}: {}", m_redis.address(), redis.error()));
    }
    if (*marker != m_marker) {
        reset();
    }
}

void Submission::reset() const
{
    const auto where = fmt::format("queue {} at {}", m_jobs.name(), m_redis.address());
    if (m_ids.empty()) {
        // Nothing is lost, and the next submit starts afresh (the caller says nothing was
        // submitted).
        throw RedisUnreachable(fmt::format("{} was reset as this submit began", where));
    }
    const auto lost = m_waiting ? unreported() : m_ids;
    throw std::runtime_error(
        fmt::format("{} was reset after these jobs were submitted; {} lost: {}{}", where,
                    counted(lost.size(), "job"), list_ids(lost),
                    m_waiting ? "" : "; nothing more was submitted"));
}

void Submission::add(const std::vector<std::string>& ids)
{
    m_ids.insert(m_ids.end(), ids.begin(), ids.end());
}

std::string Submission::describe_submitted() const
{
    if (m_ids.empty()) {
        return "nothing was submitted";
    }
    std::string text;
    if (m_confirmed > 0) {
        const std::vector<std::string> in(m_ids.begin(),
                                          m_ids.begin() + static_cast<long>(m_confirmed));
        text =
            fmt::format("{} {} submitted to queue {} (queue ids {}), ", counted(in.size(), "job"),
                        in.size() == 1 ? "was" : "were", m_jobs.name(), list_ids(in));
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

std::vector<std::string> Submission::unreported() const
{
    std::vector<std::string> ids;
    std::copy_if(m_ids.begin(), m_ids.end(), std::back_inserter(ids),
                 [&](const std::string& id) { return m_reported.count(id) == 0; });
    return ids;
}

std::size_t Submission::wait(const std::string& batch)
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
            std::optional<std::vector<std::string>> ended;
            if (resync) {
                ended = call([&] { return m_jobs.ended_ids(redis, batch); });
            } else {
                ended = m_jobs.wait_ended(redis, batch, k_wait_round_s);
                if (!ended) {
                    if (redis.connected()) {
                        throw std::runtime_error(
                            fmt::format("{}: {}", m_redis.address(), redis.error()));
                    }
                    resync = true;
                    continue; // check_marker() reconnects
                }
            }
            resync = false;
            for (const auto& id : *ended) {
                if (m_reported.count(id) != 0) {
                    continue;
                }
                const auto job = call([&] { return m_jobs.fetch(redis, id); });
                if (job.fields.empty()) {
                    check_marker(); // a reset explains it
                    spdlog::error("queue job {} is lost: its record is gone from queue {} at {}",
                                  id, m_jobs.name(), m_redis.address());
                    m_lost.push_back(id);
                } else if (!report_end(job)) {
                    ++failed;
                }
                m_reported.insert(id);
            }
        }
    } catch (const RedisUnreachable& error) {
        const auto unknown = unreported();
        throw RedisUnreachable(
            fmt::format("{}; the outcome of {} is unknown: {} (they stay queued and may still run; "
                        "`gpusched queue` shows them once Redis is back)",
                        error.what(), counted(unknown.size(), "job"), list_ids(unknown)));
    }
    if (!m_lost.empty()) {
        throw std::runtime_error(fmt::format("{} lost: their records are gone from queue {} "
                                             "at {}: {}",
                                             counted(m_lost.size(), "job"), m_jobs.name(),
                                             m_redis.address(), list_ids(m_lost)));
    }
    return failed;
}

} // namespace gpusched::cli
