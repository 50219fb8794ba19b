// The runner's side of host-wide leases: the Placement decides (whose lease a job needs, the
// hand-over at a job boundary, what to let go); here its answers are logged, and the waits
// for leases another process holds are descriptors in the loop's poll.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpusched::sys {

// The lease descriptors of the job's GPUs, once every one is leased to us. Else nothing: the
// job goes back to the queue, and the GPUs another process holds are waited for.
std::optional<std::vector<int>> JobRunner::take_leases(const StartJob& job)
{
    const auto& pool = m_scheduler.pool();
    std::vector<int> fds;
    const auto answer =
        m_scheduler.placement().take_leases(job.gpus, job.allocation, m_clock.now(), fds);
    for (const auto& handed : answer.handed_over) {
        spdlog::info("GPU {} handed over to {}'s process {}, which waited for it",
                     pool.id(handed.gpu), handed.taker.user, handed.taker.pid);
    }
    if (answer.taken()) {
        return fds;
    }
    for (const auto slot : answer.no_room) {
        spdlog::debug("GPU {}: job {} does not fit beside what other processes promised there",
                      pool.id(slot), job.command.id);
    }
    for (const auto& wait : answer.waits_begun) {
        m_report.changed(); // the status line says it short; the log once, in full
        spdlog::info("waiting for GPU {}: {} is leased by {}", pool.id(wait.gpu),
                     wait.blocker.empty() ? "it" : wait.blocker,
                     describe_lease_holder(wait.holder));
    }
    apply(m_scheduler.on_lease_refused(job.command.id, answer.refused));
    return std::nullopt;
}

void JobRunner::lease_holders_changed(const GpuSlots& slots)
{
    m_scheduler.placement().holders_changed(slots);
}

void JobRunner::add_lease_poll_fds(std::vector<pollfd>& fds) const
{
    if (m_options.leases) {
        m_options.leases->add_poll_fds(fds);
    }
}

bool JobRunner::on_lease_ready(const pollfd& ready)
{
    if (!m_options.leases) {
        return false;
    }
    const auto granted = m_options.leases->on_ready(ready);
    if (!granted) {
        return false;
    }
    for (const auto slot : *granted) {
        spdlog::debug("GPU {}: its lease is ours", m_scheduler.pool().id(slot));
        m_scheduler.placement().on_lease_granted(slot);
        m_report.changed();
        apply(m_scheduler.on_lease_available(slot));
    }
    return true;
}

// Runs before each wait; the Placement's rules say what to let go and which records to write.
void JobRunner::tend_leases()
{
    if (!m_options.leases) {
        return;
    }
    const auto holders_of = [this](GpuSlot slot) {
        std::vector<LeaseHolder> holders;
        for (const auto& job : m_jobs.jobs()) {
            if (std::find(job.slots.begin(), job.slots.end(), slot) != job.slots.end()) {
                holders.push_back(LeaseHolder{job.leader, seconds_since_epoch(job.started_wall),
                                              shorten_command(job.command), job.memory});
            }
        }
        return holders;
    };
    const auto given_up = m_scheduler.placement().tend_leases(
        m_scheduler.wants_gpus(), m_scheduler.queued_count(), holders_of);
    for (const auto slot : given_up) {
        apply(m_scheduler.on_lease_available(slot));
    }
}

} // namespace gpusched::sys
