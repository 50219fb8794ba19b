#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// Index of a GPU in the pool; the id handed to jobs is pool.id(slot).
using GpuSlot = std::size_t;

// The GPUs jobs may use. Free GPUs are handed out first-in first-out: the GPU that has been
// idle longest goes next, so work spreads over every GPU instead of piling onto the one
// that was freed last.
class GpuPool {
public:
    explicit GpuPool(std::vector<std::string> ids);

    std::size_t size() const { return m_ids.size(); }
    std::size_t free_count() const { return m_free.size(); }
    const std::string& id(GpuSlot slot) const { return m_ids.at(slot); }
    const std::vector<std::string>& ids() const { return m_ids; }

    // The GPU free longest, passing over `avoid` (where a job just failed) if another is free.
    std::optional<GpuSlot> acquire(std::optional<GpuSlot> avoid = std::nullopt);
    // Returning a GPU that is already free is a logic error: it would hand one GPU to two jobs.
    void release(GpuSlot slot);

private:
    std::vector<std::string> m_ids;
    std::deque<GpuSlot> m_free;
    std::vector<bool> m_is_free;
};

} // namespace gpusched
