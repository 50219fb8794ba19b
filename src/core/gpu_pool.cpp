#include <gpusched/gpu_pool.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace gpusched {

GpuPool::GpuPool(std::vector<std::string> ids)
    : m_ids(std::move(ids)), m_is_free(m_ids.size(), true)
{
    if (m_ids.empty()) {
        throw std::invalid_argument("a GPU pool needs at least one GPU");
    }
    for (GpuSlot slot = 0; slot < m_ids.size(); ++slot) {
        m_free.push_back(slot);
    }
}

std::optional<GpuSlot> GpuPool::acquire(std::optional<GpuSlot> avoid)
{
    if (m_free.empty()) {
        return std::nullopt;
    }
    auto chosen = m_free.begin();
    if (avoid && *chosen == *avoid && m_free.size() > 1) {
        ++chosen;
    }
    const GpuSlot slot = *chosen;
    m_free.erase(chosen);
    m_is_free[slot] = false;
    return slot;
}

void GpuPool::release(GpuSlot slot)
{
    if (slot >= m_ids.size() || m_is_free[slot]) {
        throw std::logic_error(fmt::format("GPU slot {} released while free", slot));
    }
    m_is_free[slot] = true;
    m_free.push_back(slot);
}

} // namespace gpusched
