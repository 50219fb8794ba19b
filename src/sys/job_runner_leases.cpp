// The runner's side of host-wide leases: take a job's leases before it starts, wait for
// those another process holds, let go of a GPU's lease when none of our jobs is left on it.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/wait.h>

#include <algorithm>
#include <limits>

namespace gpusched::sys {

// The lease descriptors of the job's GPUs, once every one is leased to us. Else nothing: the
// job goes back to the queue, and the GPUs another process holds are waited for.
std::optional<std::vector<int>> JobRunner::take_leases(const StartJob& job)
{
    auto& leases = *m_options.leases;
    hand_over_at_boundary(job.gpus);
    GpuSlots refused;
    std::vector<int> fds;
    for (const auto slot : job.gpus) {
        if (leases.try_take(slot)) {
            leases.append_fds(slot, fds);
        } else {
            refused.push_back(slot);
        }
    }
    if (refused.empty()) {
        return fds;
    }
    for (const auto slot : refused) {
        if (!leases.waiting(slot)) {
            leases.set_wanted(job.gpus.size());
            leases.wait_for(slot); // first: its connection tells who the holder is
            const auto blocker = leases.blocked_by(slot);
            auto holder = leases.holder(slot);
            if (const auto handed = m_handed_to.find(slot); handed != m_handed_to.end()) {
                // Just handed over: until the new holder has made the lease its own, the
                // kernel still names us as its taker.
                holder = LeaseOwner{handed->second, std::nullopt, RecordCheck::none};
            }
            const auto& id = m_scheduler.pool().id(slot);
            m_waiting_for = fmt::format("waiting for GPU {}, held by {}", id,
                                        describe_lease_wait(holder));
            m_report.changed();
            // The status line says it short; the log once, in full.
            spdlog::info("waiting for GPU {}: {} is leased by {}", id,
                         blocker.empty() ? "it" : blocker, describe_lease_holder(holder));
        }
    }
    apply(m_scheduler.on_lease_refused(job.command.id, refused));
    return std::nullopt;
}

// A job boundary: our last job on a GPU has ended and the next would follow it there. A
// process that waits for the GPU and is owed it by the fair-share rule gets it instead, and
// the job waits its turn like any other.
void JobRunner::hand_over_at_boundary(const GpuSlots& slots)
{
    auto& leases = *m_options.leases;
    for (const auto slot : slots) {
        if (!leases.held(slot) || m_scheduler.pool().load(slot) != 1) {
            continue; // not ours yet, or another of our jobs still runs there
        }
        if (const auto taker = leases.hand_over(slot, gpu_seconds_used())) {
            spdlog::info("GPU {} handed over to {}'s process {}, which waited for it",
                         m_scheduler.pool().id(slot), taker->user, taker->pid);
            m_handed_to[slot] = *taker;
        }
    }
}

double JobRunner::gpu_seconds_used() const
{
    double used = m_gpu_seconds;
    const auto now = m_clock.now();
    for (const auto& job : m_jobs.jobs()) {
        if (!job.shell_running()) {
            continue; // counted when it ended
        }
        used += std::chrono::duration<double>(now - job.started).count() *
                static_cast<double>(job.slots.size());
    }
    return used;
}

void JobRunner::lease_holders_changed(const GpuSlots& slots)
{
    if (!m_options.leases) {
        return;
    }
    for (const auto slot : slots) {
        m_lease_record_stale[slot] = true;
    }
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
        m_handed_to.erase(slot);
        m_waiting_for.clear();
        m_report.changed();
        apply(m_scheduler.on_lease_available(slot));
    }
    return true;
}

// Runs before each wait: a GPU none of our jobs uses any more is let go (its jobs' own
// descriptors keep it leased while anything they left behind still runs), records follow
// the jobs, and nobody waits for GPUs that would get no job.
void JobRunner::tend_leases()
{
    if (!m_options.leases) {
        return;
    }
    auto& leases = *m_options.leases;
    if (!m_scheduler.wants_gpus()) {
        for (const auto slot : leases.cancel_waits()) {
            apply(m_scheduler.on_lease_available(slot));
        }
    }
    for (GpuSlot slot = 0; slot < leases.size(); ++slot) {
        if (!leases.held(slot)) {
            continue;
        }
        if (m_scheduler.pool().load(slot) == 0) {
            // No job of ours follows: the first who waits gets it, whatever its share.
            if (!leases.hand_over(slot, std::numeric_limits<double>::infinity())) {
                leases.release(slot);
            }
        } else if (m_lease_record_stale[slot]) {
            std::vector<LeaseHolder> holders;
            for (const auto& job : m_jobs.jobs()) {
                if (std::find(job.slots.begin(), job.slots.end(), slot) != job.slots.end()) {
                    holders.push_back(LeaseHolder{job.leader, seconds_since_epoch(job.started_wall),
                                                  shorten_command(job.command)});
                }
            }
            // Queued so far: more may come while the input is read.
            leases.describe(slot, std::move(holders), m_scheduler.queued_count());
        }
        m_lease_record_stale[slot] = false;
    }
}

} // namespace gpusched::sys
