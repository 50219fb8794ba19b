#include <gpusched/placement.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

namespace gpusched {
namespace {

double seconds_of(Placement::Clock::time_point time)
{
    return std::chrono::duration<double>(time.time_since_epoch()).count();
}

} // namespace

Placement::Placement(GpuPool pool)
    : m_pool(std::move(pool)), m_memory(m_pool.size()), m_memory_unreadable(m_pool.size(), false),
      m_record_stale(m_pool.size(), false)
{
}

// Without --jobs-per-gpu, jobs that ask for memory are as many on a GPU as fit: the bound is
// that of the option itself.
unsigned Placement::memory_jobs_cap() const
{
    constexpr unsigned k_most_jobs_on_a_gpu = 1000;
    return m_jobs_per_gpu_given ? m_pool.jobs_per_gpu() : k_most_jobs_on_a_gpu;
}

bool Placement::memory_fits(GpuSlot slot, std::uint64_t memory) const
{
    if (m_pool.load(slot) >= memory_jobs_cap()) {
        return false;
    }
    if (m_samples == nullptr || m_memory_unreadable[slot]) {
        return m_memory.holds_none(slot); // cannot be shared safely: the GPU whole
    }
    const auto usable = m_memory.usable(slot);
    if (!usable || m_memory_stale) {
        return false; // until the first look, or a look less out of date
    }
    if (memory > *usable) {
        return m_memory.holds_none(slot); // more than it can ever have: alone, as without --mem
    }
    return m_memory.available(slot).value_or(0) >= memory;
}

std::optional<Allocation> Placement::acquire(const GpuNeed& need, const GpuSlots& avoid)
{
    std::optional<GpuSlots> gpus;
    if (need.memory) {
        const auto memory = *need.memory;
        gpus = m_pool.acquire(need.gpus, avoid,
                              [this, memory](GpuSlot slot) { return memory_fits(slot, memory); });
    } else {
        // Its slot of --jobs-per-gpu, on a GPU no job of ours has whole.
        const auto slots = m_pool.jobs_per_gpu();
        gpus = m_pool.acquire(need.gpus, avoid, [this, slots](GpuSlot slot) {
            return m_pool.load(slot) < slots && !m_memory.held_whole(slot);
        });
    }
    if (!gpus) {
        return std::nullopt;
    }
    Allocation allocation{m_next_allocation++, std::move(*gpus), need.memory};
    for (const auto slot : allocation.gpus) {
        const auto usable = m_memory.usable(slot);
        const bool unshared = m_samples == nullptr || m_memory_unreadable[slot] ||
                              (need.memory && usable && *need.memory > *usable);
        if (need.memory && !unshared) {
            m_memory.reserve(slot, allocation.id, need.memory);
        } else if (need.memory || !m_jobs_per_gpu_given) {
            m_memory.reserve(slot, allocation.id, std::nullopt); // the whole GPU
        } else {
            m_memory.reserve(slot, allocation.id, 0); // its slot: counted at what it uses
        }
    }
    m_memory_holds += need.memory ? 1 : 0;
    return allocation;
}

void Placement::release(const Allocation& allocation)
{
    m_pool.release(allocation.gpus);
    for (const auto slot : allocation.gpus) {
        m_memory.release(slot, allocation.id);
        if (m_leases != nullptr && allocation.memory) {
            m_leases->release_share(slot, allocation.id);
        }
        m_shares_taken.erase({allocation.id, slot});
    }
    m_memory_holds -= allocation.memory ? 1 : 0;
}

bool Placement::can_take(const GpuNeed& need) const
{
    return room_for(need) > 0;
}

std::size_t Placement::room_for(const GpuNeed& need) const
{
    if (!need.memory) {
        return m_pool.room_for(need.gpus);
    }
    std::vector<std::size_t> room;
    for (GpuSlot slot = 0; slot < m_pool.size(); ++slot) {
        if (!m_pool.open(slot) || !memory_fits(slot, *need.memory)) {
            continue;
        }
        const auto by_count = memory_jobs_cap() - m_pool.load(slot);
        const auto available = m_memory.available(slot);
        const bool whole = m_samples == nullptr || m_memory_unreadable[slot] || !available ||
                           *need.memory > m_memory.usable(slot).value_or(0);
        room.push_back(whole ? 1 : std::min<std::size_t>(by_count, *available / *need.memory));
    }
    return jobs_that_fit(std::move(room), need.gpus);
}

bool Placement::has_memory_room() const
{
    for (GpuSlot slot = 0; slot < m_pool.size(); ++slot) {
        if (m_pool.open(slot) && m_samples != nullptr && !m_memory_unreadable[slot] &&
            !m_memory_stale && m_pool.load(slot) < memory_jobs_cap() &&
            m_memory.available(slot).value_or(0) > 0) {
            return true;
        }
    }
    return false;
}

bool Placement::memory_wanted(bool memory_jobs_wait) const
{
    return memory_jobs_wait || m_memory_holds > 0;
}

GpuHolding Placement::holding(GpuSlot slot) const
{
    GpuHolding holding;
    holding.jobs = m_pool.load(slot);
    holding.usable = m_pool.usable(slot);
    holding.paused = m_pool.paused(slot);
    holding.leased_elsewhere = m_pool.leased_elsewhere(slot);
    holding.leased = m_leases != nullptr && m_leases->held(slot);
    const bool takes_jobs = holding.usable && !holding.paused && !holding.leased_elsewhere;
    holding.room =
        takes_jobs ? m_pool.jobs_per_gpu() - std::min(holding.jobs, m_pool.jobs_per_gpu()) : 0;
    holding.memory_total = m_memory.total(slot);
    holding.memory_used = m_memory.used(slot);
    holding.memory_reserved = m_memory.reserved(slot);
    holding.memory_available = m_memory.available(slot);
    if (const auto handed = m_handed_to.find(slot); handed != m_handed_to.end()) {
        holding.handed_to = handed->second;
    }
    return holding;
}

LeaseAnswer Placement::take_leases(const GpuSlots& gpus, AllocationId id, Clock::time_point now,
                                   std::vector<int>& fds)
{
    LeaseAnswer answer;
    if (m_leases == nullptr) {
        return answer;
    }
    auto& leases = *m_leases;
    hand_over_at_boundary(gpus, now, answer);
    for (const auto slot : gpus) {
        const auto promised = m_memory.reservation(slot, id);
        if (promised && *promised > 0) {
            const auto fits = [this, slot](std::uint64_t elsewhere) {
                m_memory.set_promised_elsewhere(slot, elsewhere);
                return m_memory.within_total(slot);
            };
            const auto share = leases.try_share(slot, id, *promised, fits, fds);
            if (share.share == LeaseTable::Share::shared) {
                m_shares_taken.emplace(id, slot);
                continue;
            }
            if (share.share == LeaseTable::Share::no_room) {
                // Counted until the next look, which may find room: the GPU is not chosen
                // again on what was just seen.
                m_memory.set_promised_elsewhere(slot, share.promised_elsewhere);
                answer.no_room.push_back(slot);
                continue;
            }
        }
        if (leases.try_take(slot)) {
            leases.append_fds(slot, fds);
        } else {
            answer.refused.push_back(slot);
        }
    }
    for (const auto slot : answer.refused) {
        m_pool.set_leased_elsewhere(slot, true); // no job goes there until it is ours
        if (leases.waiting(slot)) {
            continue;
        }
        leases.set_wanted(gpus.size());
        leases.wait_for(slot); // first: its connection tells who the holder is
        auto holder = leases.holder(slot);
        if (const auto handed = m_handed_to.find(slot); handed != m_handed_to.end()) {
            // Just handed over: until the new holder has made the lease its own, the kernel
            // still names us as its taker.
            holder = LeaseOwner{handed->second, std::nullopt, RecordCheck::none};
        }
        m_waiting_for = fmt::format("waiting for GPU {}, held by {}", m_pool.id(slot),
                                    describe_lease_wait(holder));
        answer.waits_begun.push_back(LeaseWaitBegun{slot, leases.blocked_by(slot), holder});
    }
    return answer;
}

// A job boundary: our last job on a GPU has ended and the next would follow it there. A
// process that waits for the GPU and is owed it by the fair-share rule gets it instead, and
// the job waits its turn like any other.
void Placement::hand_over_at_boundary(const GpuSlots& gpus, Clock::time_point now,
                                      LeaseAnswer& answer)
{
    for (const auto slot : gpus) {
        if (!m_leases->held(slot) || m_pool.load(slot) != 1) {
            continue; // not ours yet, or another of our jobs still runs there
        }
        if (const auto taker =
                m_leases->hand_over(slot, gpu_seconds_used(now), LeaseTable::k_no_time_limit)) {
            m_handed_to[slot] = *taker;
            answer.handed_over.push_back(HandedOver{slot, *taker});
        }
    }
}

void Placement::on_lease_granted(GpuSlot slot)
{
    m_pool.set_leased_elsewhere(slot, false);
    m_handed_to.erase(slot);
    m_waiting_for.clear();
}

void Placement::holders_changed(const GpuSlots& slots)
{
    if (m_leases == nullptr) {
        return;
    }
    for (const auto slot : slots) {
        m_record_stale[slot] = true;
    }
}

GpuSlots Placement::tend_leases(bool wants_gpus, std::size_t queued, const HoldersOf& holders_of)
{
    GpuSlots given_up;
    if (m_leases == nullptr) {
        return given_up;
    }
    auto& leases = *m_leases;
    if (!wants_gpus) {
        given_up = leases.cancel_waits();
        for (const auto slot : given_up) {
            m_pool.set_leased_elsewhere(slot, false); // to be tried again, should a job want it
        }
    }
    for (GpuSlot slot = 0; slot < m_pool.size(); ++slot) {
        if (!leases.held(slot)) {
            continue;
        }
        if (m_pool.load(slot) == 0) {
            // No job of ours follows: the first who waits gets it, whatever its share.
            if (!leases.hand_over(slot, std::numeric_limits<double>::infinity(),
                                  LeaseTable::k_no_time_limit)) {
                leases.release(slot);
            }
        } else if (m_record_stale[slot]) {
            // Queued so far: more may come while the input is read.
            leases.describe(slot, holders_of(slot), queued);
        }
        m_record_stale[slot] = false;
    }
    return given_up;
}

void Placement::cancel_lease_waits()
{
    if (m_leases != nullptr) {
        m_leases->cancel_waits();
    }
}

double Placement::gpus_held(const GpuSlots& gpus, AllocationId id) const
{
    double held = 0;
    for (const auto slot : gpus) {
        const auto promised = m_memory.reservation(slot, id);
        const auto total = m_memory.total(slot);
        const bool beside_others = m_leases == nullptr || m_shares_taken.contains({id, slot});
        held += beside_others && promised && total && *total > 0
                    ? std::min(1.0, static_cast<double>(std::max(*promised, m_memory.peak(id))) /
                                        static_cast<double>(*total))
                    : 1.0;
    }
    return held;
}

void Placement::on_job_started(double gpus, Clock::time_point started)
{
    m_running_gpus += gpus;
    m_running_starts += gpus * seconds_of(started);
}

void Placement::on_attempt_ended(double started_holding, double held, Clock::time_point started,
                                 Clock::time_point now, bool launched)
{
    if (launched) {
        m_running_gpus -= started_holding;
        m_running_starts -= started_holding * seconds_of(started);
    }
    m_ended_seconds += std::chrono::duration<double>(now - started).count() * held;
    if (m_leases != nullptr) {
        m_leases->note_usage(m_ended_seconds); // to the holders we wait for, if any
    }
}

double Placement::gpu_seconds_used(Clock::time_point now) const
{
    return m_ended_seconds + (m_running_gpus * seconds_of(now) - m_running_starts);
}

std::vector<std::pair<GpuSlot, bool>>
Placement::take_sample_changes(bool wants_gpus, const GpuSamples::OwnerOf& owner_of)
{
    if (m_samples == nullptr) {
        return {};
    }
    if (!wants_gpus && !memory_wanted(false)) {
        m_samples->stop(); // no GPU would get a job, and no job's memory is watched
    }
    take_memory_look(owner_of);
    return m_samples->take_changes([this](GpuSlot slot) { return m_pool.load(slot) > 0; });
}

void Placement::take_memory_look(const GpuSamples::OwnerOf& owner_of)
{
    if (m_samples == nullptr) {
        return;
    }
    if (auto look = m_samples->take_memory(owner_of)) {
        m_memory_stale = look->stale;
        for (GpuSlot slot = 0; slot < m_pool.size() && slot < look->gpus.size(); ++slot) {
            const auto& reading = look->gpus[slot];
            m_memory_unreadable[slot] = !reading;
            if (reading) {
                m_memory.observe(slot, *reading);
                if (m_leases != nullptr) {
                    m_memory.set_promised_elsewhere(slot,
                                                    m_leases->promised_elsewhere(slot, *reading));
                }
            }
        }
    }
}

} // namespace gpusched
