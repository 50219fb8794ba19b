#include <gpusched/sys/gpu_usage_watch.hpp>

#include <gpusched/gpu_room.hpp>
#include <gpusched/sys/process_tree.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <system_error>

namespace gpusched::sys {

GpuUsageWatch::GpuUsageWatch(ProbeCommand probe, std::optional<BusyRule> busy,
                             std::chrono::milliseconds recheck,
                             std::chrono::milliseconds memory_every, std::vector<std::string> ids,
                             const sigset_t& child_mask)
    : m_command(std::move(probe)), m_rule(busy), m_recheck(recheck), m_memory_every(memory_every),
      m_ids(std::move(ids)), m_child_mask(child_mask), m_busy(m_ids.size()),
      m_told_usable(m_ids.size(), true)
{
}

// GPUs busy with work gpusched did not start are looked at again only while jobs wait for a
// GPU, --recheck after the last answer; memory, every memory_every while a job that asks for
// it runs or waits: no polling while there is nothing to gain.
std::optional<GpuUsageWatch::Clock::time_point>
GpuUsageWatch::next_deadline(bool jobs_wait, bool memory_wanted) const
{
    if (m_answer) {
        return std::nullopt; // an answer is taken before anything else is due
    }
    if (m_look) {
        // A killed look is waited for by its SIGCHLD, not by a deadline.
        return m_wanted ? std::optional(m_look->deadline()) : std::nullopt;
    }
    std::optional<Clock::time_point> due;
    const auto earliest = [&due](Clock::time_point time) {
        due = due ? std::min(*due, time) : time;
    };
    if (memory_wanted) {
        // After a look that failed, the next waits longer: a driver that fails fails fast, and
        // one that hangs holds a look for its whole --probe-timeout.
        Clock::time_point next{};
        if (m_answered) {
            next = m_last_answer + m_memory_every;
        }
        if (m_last_failure) {
            next = std::max(next, *m_last_failure + k_retry_after_failure);
        }
        earliest(next);
    }
    if (m_rule && !m_given_up) {
        const bool any_busy = std::any_of(m_busy.begin(), m_busy.end(),
                                          [](const auto& why) { return why.has_value(); });
        if (!m_answered) {
            earliest(Clock::time_point{});
        } else if (any_busy && jobs_wait) {
            earliest(m_last_answer + m_recheck);
        }
    }
    return due;
}

void GpuUsageWatch::on_time(Clock::time_point now)
{
    if (!m_look) {
        start_look();
    } else if (m_wanted && now >= m_look->deadline()) {
        m_look->kill(); // reaped by the runner, then dropped
        m_wanted = false;
        give_up(m_look->timeout_problem());
    }
}

void GpuUsageWatch::postpone(Clock::duration stopped)
{
    if (m_look) {
        m_look->postpone(stopped);
    }
}

void GpuUsageWatch::start_look()
{
    try {
        m_look = std::make_unique<ProbeProcess>(m_command, m_ids, m_child_mask);
        m_wanted = true;
        spdlog::debug("looking at GPU usage with {}", m_look->name());
    } catch (const std::system_error& error) {
        give_up(fmt::format("cannot start {}: {}", m_command.program, error.what()));
    }
}

void GpuUsageWatch::add_poll_fds(std::vector<pollfd>& fds) const
{
    if (m_look && m_look->fd() >= 0) {
        fds.push_back({m_look->fd(), POLLIN, 0});
    }
}

bool GpuUsageWatch::on_ready(const pollfd& ready)
{
    if (!m_look || ready.fd != m_look->fd() || ready.fd < 0) {
        return false;
    }
    m_look->on_readable();
    after_look();
    return true;
}

bool GpuUsageWatch::on_child_exit(pid_t pid, int wait_status)
{
    if (!m_look || !m_look->on_exit(pid, wait_status)) {
        return false;
    }
    after_look();
    return true;
}

void GpuUsageWatch::stop()
{
    if (m_look && m_wanted) {
        m_look->kill();
        m_wanted = false;
    }
    // Nor is an answer judged: a look the stop killed (a signal reaches every child) has
    // nothing to say.
    m_answer.reset();
}

// A look is over once its pipe has ended and it is reaped; a killed one is dropped then.
void GpuUsageWatch::after_look()
{
    auto answer = m_look->answer();
    if (!answer) {
        return;
    }
    const bool wanted = std::exchange(m_wanted, false);
    m_look.reset();
    if (wanted) {
        m_answer = std::move(answer);
    }
}

// --skip-busy gives up for good: every GPU is used from then on. Memory is looked at again
// later, each GPU taken whole meanwhile; said once until a look answers again.
void GpuUsageWatch::give_up(const std::string& why)
{
    if (m_rule && !m_given_up) {
        spdlog::warn("--skip-busy cannot tell which GPUs are busy ({}); every GPU is used", why);
    }
    if (!std::exchange(m_memory_failing, true)) {
        spdlog::warn("cannot read the GPUs' memory ({}); a job that asks for memory has its GPU "
                     "to itself until a look answers",
                     why);
    }
    m_given_up = true;
    m_memory_given_up = true;
    m_last_failure = Clock::now();
    m_answer.reset();
    m_report.reset();
    std::fill(m_busy.begin(), m_busy.end(), std::nullopt);
}

void GpuUsageWatch::absorb()
{
    auto answer = std::exchange(m_answer, std::nullopt);
    if (!answer) {
        return;
    }
    auto report =
        answer->problem.empty() ? parse_usage(answer->output) : UsageReport{{}, answer->problem};
    if (!report.problem.empty()) {
        give_up(report.problem);
        return;
    }
    m_report = std::move(report);
    m_memory_unread = true;
    m_last_answer = Clock::now();
    if (std::exchange(m_memory_failing, false)) {
        spdlog::info("the GPUs' memory can be read again");
    }
}

void GpuUsageWatch::judge(const std::function<bool(GpuSlot)>& runs_our_jobs)
{
    for (GpuSlot slot = 0; slot < m_ids.size(); ++slot) {
        const auto found = m_report->gpus.find(m_ids[slot]);
        if (found == m_report->gpus.end()) {
            continue; // NVML does not know it (a MIG instance, say): it is never skipped
        }
        std::vector<int> foreign;
        for (const auto& process : found->second.processes) {
            if (!descends_from(process.pid, getpid())) {
                foreign.push_back(process.pid);
            }
        }
        auto reason = m_rule->busy_reason(found->second, foreign, runs_our_jobs(slot));
        if (reason == m_busy[slot]) {
            continue; // logged once per change
        }
        if (reason) {
            spdlog::warn("GPU {} skipped: {}", m_ids[slot], *reason);
        } else {
            spdlog::info("GPU {} is free again", m_ids[slot]);
        }
        m_busy[slot] = std::move(reason);
    }
}

std::vector<std::pair<GpuSlot, bool>>
GpuUsageWatch::take_changes(const std::function<bool(GpuSlot)>& runs_our_jobs)
{
    absorb();
    std::vector<std::pair<GpuSlot, bool>> changes;
    if (!m_rule) {
        m_report.reset();
        return changes; // every GPU is usable
    }
    if (m_report) {
        judge(runs_our_jobs);
        m_answered = true;
        m_report.reset();
    }
    for (GpuSlot slot = 0; slot < m_ids.size(); ++slot) {
        const bool usable = m_given_up || (m_answered && !m_busy[slot]);
        if (usable != m_told_usable[slot]) {
            m_told_usable[slot] = usable;
            changes.emplace_back(slot, usable);
        }
    }
    return changes;
}

std::optional<GpuSamples::MemoryLook> GpuUsageWatch::take_memory(const OwnerOf& owner_of)
{
    absorb();
    if (std::exchange(m_memory_given_up, false)) {
        return MemoryLook{std::vector<std::optional<GpuMemoryReading>>(m_ids.size()), false};
    }
    if (!m_report || !std::exchange(m_memory_unread, false)) {
        // A reading older than a few looks is out of date (a look that hangs, or none taken
        // while no job wanted memory): until the next, nothing more is promised on it.
        const bool stale = m_answered && !m_memory_failing &&
                           Clock::now() - m_last_answer > k_readings_expire_after * m_memory_every;
        if (stale) {
            return MemoryLook{{}, true};
        }
        return std::nullopt;
    }
    if (!m_rule) {
        m_answered = true; // without --skip-busy, nothing else judges the answer
    }
    MemoryLook look;
    for (const auto& id : m_ids) {
        const auto found = m_report->gpus.find(id);
        if (found == m_report->gpus.end()) {
            look.gpus.emplace_back(); // NVML does not know it: unread
            continue;
        }
        auto reading = memory_reading(found->second);
        for (const auto& process : found->second.processes) {
            if (const auto owner = owner_of ? owner_of(process.pid) : std::nullopt) {
                reading.ours[*owner] += process.used_memory;
            }
        }
        look.gpus.push_back(std::move(reading));
    }
    return look;
}

} // namespace gpusched::sys
