#include <gpusched/gpu_pool.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

namespace gpusched {

GpuPool::GpuPool(std::vector<std::string> ids, unsigned jobs_per_gpu)
    : m_ids(std::move(ids)), m_jobs_per_gpu(jobs_per_gpu), m_gpus(m_ids.size())
{
    if (m_ids.empty()) {
        throw std::invalid_argument("a GPU pool needs at least one GPU");
    }
    if (m_jobs_per_gpu == 0) {
        throw std::invalid_argument("a GPU must take at least one job");
    }
    // At the start the GPUs take their turns in the order they were given.
    for (auto& gpu : m_gpus) {
        gpu.last_release = m_releases++;
    }
}

std::string GpuPool::ids_of(const GpuSlots& slots) const
{
    std::string joined;
    for (const auto slot : slots) {
        joined += (joined.empty() ? "" : ",") + id(slot);
    }
    return joined;
}

bool GpuPool::open(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    return gpu.usable && !gpu.leased_elsewhere && !gpu.paused;
}

bool GpuPool::has_room(GpuSlot slot) const
{
    return open(slot) && m_gpus[slot].load < m_jobs_per_gpu;
}

bool GpuPool::can_take(std::size_t count) const
{
    std::size_t with_room = 0;
    for (GpuSlot slot = 0; slot < m_gpus.size(); ++slot) {
        with_room += has_room(slot) ? 1 : 0;
    }
    return with_room >= count;
}

std::size_t jobs_that_fit(std::vector<std::size_t> room, std::size_t gpus_per_job)
{
    if (gpus_per_job == 0) {
        return 0;
    }
    std::size_t jobs = 0;
    while (room.size() >= gpus_per_job) {
        std::sort(room.begin(), room.end(), std::greater<>());
        if (room[gpus_per_job - 1] == 0) {
            break;
        }
        for (std::size_t i = 0; i < gpus_per_job; ++i) {
            --room[i];
        }
        ++jobs;
    }
    return jobs;
}

std::size_t GpuPool::room_for(std::size_t gpus_per_job) const
{
    std::vector<std::size_t> room;
    for (GpuSlot slot = 0; slot < m_gpus.size(); ++slot) {
        if (has_room(slot)) {
            room.push_back(m_jobs_per_gpu - m_gpus[slot].load);
        }
    }
    return jobs_that_fit(std::move(room), gpus_per_job);
}

std::optional<GpuSlots> GpuPool::acquire(std::size_t count, const GpuSlots& avoid,
                                         const std::function<bool(GpuSlot)>& room)
{
    GpuSlots candidates;
    for (GpuSlot slot = 0; slot < m_gpus.size(); ++slot) {
        if (room ? open(slot) && room(slot) : has_room(slot)) {
            candidates.push_back(slot);
        }
    }
    if (candidates.size() < count) {
        return std::nullopt;
    }
    const auto avoided = [&avoid](GpuSlot slot) {
        return std::find(avoid.begin(), avoid.end(), slot) != avoid.end();
    };
    // Order of preference: not avoided, least loaded, longest since a job left it.
    std::sort(candidates.begin(), candidates.end(), [&](GpuSlot a, GpuSlot b) {
        return std::tuple(avoided(a), m_gpus[a].load, m_gpus[a].last_release) <
               std::tuple(avoided(b), m_gpus[b].load, m_gpus[b].last_release);
    });
    candidates.resize(count);
    for (const auto slot : candidates) {
        ++m_gpus[slot].load;
    }
    return candidates;
}

void GpuPool::release(const GpuSlots& slots)
{
    for (const auto slot : slots) {
        if (slot >= m_gpus.size() || m_gpus[slot].load == 0) {
            throw std::logic_error(fmt::format("GPU slot {} released while it holds no job", slot));
        }
    }
    for (const auto slot : slots) {
        --m_gpus[slot].load;
        m_gpus[slot].last_release = m_releases++;
    }
}

} // namespace gpusched
