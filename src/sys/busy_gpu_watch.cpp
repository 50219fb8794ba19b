#include <gpusched/sys/busy_gpu_watch.hpp>

#include <gpusched/sys/process_tree.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <system_error>

namespace gpusched::sys {

BusyGpuWatch::BusyGpuWatch(ProbeCommand probe, BusyRule rule, std::chrono::milliseconds recheck,
                           std::vector<std::string> ids, const sigset_t& child_mask)
    : m_command(std::move(probe)), m_rule(rule), m_recheck(recheck), m_ids(std::move(ids)),
      m_child_mask(child_mask), m_busy(m_ids.size()), m_told_usable(m_ids.size(), true)
{
}

// GPUs busy with work gpusched did not start are looked at again only while jobs wait for a
// GPU, --recheck after the last answer: no polling while there is nothing to gain.
std::optional<BusyGpuWatch::Clock::time_point> BusyGpuWatch::next_deadline(bool jobs_wait) const
{
    if (m_given_up || m_answer) {
        return std::nullopt; // an answer is judged before anything else is due
    }
    if (m_look) {
        // A killed look is waited for by its SIGCHLD, not by a deadline.
        return m_wanted ? std::optional(m_look->deadline()) : std::nullopt;
    }
    if (!m_answered) {
        return Clock::time_point{};
    }
    const bool any_busy =
        std::any_of(m_busy.begin(), m_busy.end(), [](const auto& why) { return why.has_value(); });
    if (!any_busy || !jobs_wait) {
        return std::nullopt;
    }
    return m_last_answer + m_recheck;
}

void BusyGpuWatch::on_time(Clock::time_point now)
{
    if (!m_look) {
        if (!m_given_up) {
            start_look();
        }
    } else if (m_wanted && now >= m_look->deadline()) {
        m_look->kill(); // reaped by the runner, then dropped
        m_wanted = false;
        give_up(m_look->timeout_problem());
    }
}

void BusyGpuWatch::postpone(Clock::duration stopped)
{
    if (m_look) {
        m_look->postpone(stopped);
    }
}

void BusyGpuWatch::start_look()
{
    try {
        m_look = std::make_unique<ProbeProcess>(m_command, m_ids, m_child_mask);
        m_wanted = true;
        spdlog::debug("looking at GPU usage with {}", m_look->name());
    } catch (const std::system_error& error) {
        give_up(fmt::format("cannot start {}: {}", m_command.program, error.what()));
    }
}

void BusyGpuWatch::add_poll_fds(std::vector<pollfd>& fds) const
{
    if (m_look && m_look->fd() >= 0) {
        fds.push_back({m_look->fd(), POLLIN, 0});
    }
}

bool BusyGpuWatch::on_ready(const pollfd& ready)
{
    if (!m_look || ready.fd != m_look->fd() || ready.fd < 0) {
        return false;
    }
    m_look->on_readable();
    after_look();
    return true;
}

bool BusyGpuWatch::on_child_exit(pid_t pid, int wait_status)
{
    if (!m_look || !m_look->on_exit(pid, wait_status)) {
        return false;
    }
    after_look();
    return true;
}

void BusyGpuWatch::stop()
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
void BusyGpuWatch::after_look()
{
    auto answer = m_look->answer();
    if (!answer) {
        return;
    }
    const bool wanted = std::exchange(m_wanted, false);
    m_look.reset();
    if (wanted) {
        m_answer = std::move(answer);
        m_last_answer = Clock::now();
    }
}

void BusyGpuWatch::give_up(const std::string& why)
{
    spdlog::warn("--skip-busy cannot tell which GPUs are busy ({}); every GPU is used", why);
    m_given_up = true;
    m_answer.reset();
    std::fill(m_busy.begin(), m_busy.end(), std::nullopt);
}

void BusyGpuWatch::judge(const UsageReport& report,
                         const std::function<bool(GpuSlot)>& runs_our_jobs)
{
    for (GpuSlot slot = 0; slot < m_ids.size(); ++slot) {
        const auto found = report.gpus.find(m_ids[slot]);
        if (found == report.gpus.end()) {
            continue; // NVML does not know it (a MIG instance, say): it is never skipped
        }
        std::vector<int> foreign;
        for (const int pid : found->second.compute_pids) {
            if (!descends_from(pid, getpid())) {
                foreign.push_back(pid);
            }
        }
        auto reason = m_rule.busy_reason(found->second, foreign, runs_our_jobs(slot));
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
BusyGpuWatch::take_changes(const std::function<bool(GpuSlot)>& runs_our_jobs)
{
    if (auto answer = std::exchange(m_answer, std::nullopt)) {
        auto report = answer->problem.empty() ? parse_usage(answer->output)
                                              : UsageReport{{}, answer->problem};
        if (report.problem.empty()) {
            judge(report, runs_our_jobs);
            m_answered = true;
        } else {
            give_up(report.problem);
        }
    }
    std::vector<std::pair<GpuSlot, bool>> changes;
    for (GpuSlot slot = 0; slot < m_ids.size(); ++slot) {
        const bool usable = m_given_up || (m_answered && !m_busy[slot]);
        if (usable != m_told_usable[slot]) {
            m_told_usable[slot] = usable;
            changes.emplace_back(slot, usable);
        }
    }
    return changes;
}

} // namespace gpusched::sys
