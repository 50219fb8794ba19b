#include <gpusched/gpu_memory.hpp>

#include <algorithm>

namespace gpusched {

void GpuMemoryLedger::reserve(GpuSlot slot, AllocationId id, std::optional<std::uint64_t> bytes)
{
    auto& holds = m_gpus.at(slot).holds;
    holds[id] = Hold{bytes, 0};
    if (holds.size() > 1) {
        for (const auto& [held, hold] : holds) {
            m_shared.insert(held);
        }
    }
}

void GpuMemoryLedger::release(GpuSlot slot, AllocationId id)
{
    m_gpus.at(slot).holds.erase(id);
    const bool held_elsewhere = std::any_of(
        m_gpus.begin(), m_gpus.end(), [id](const Gpu& gpu) { return gpu.holds.contains(id); });
    if (!held_elsewhere) {
        m_peaks.erase(id);
        m_shared.erase(id);
    }
}

void GpuMemoryLedger::observe(GpuSlot slot, const GpuMemoryReading& reading)
{
    auto& gpu = m_gpus.at(slot);
    gpu.total = reading.total;
    gpu.used = reading.used;
    std::uint64_t ours = 0;
    for (auto& [id, hold] : gpu.holds) {
        const auto seen = reading.ours.find(id);
        hold.observed = seen == reading.ours.end() ? 0 : seen->second;
        ours += hold.observed;
        auto& peak = m_peaks[id];
        peak = std::max(peak, hold.observed);
    }
    // What our jobs use is part of what is used; a process of a job that ended (or that the
    // look could not tie to a job) is counted as someone else's, as it still uses memory.
    gpu.foreign = reading.used > ours ? reading.used - ours : 0;
    gpu.driver = reading.processes_known && reading.used > reading.by_processes
                     ? reading.used - reading.by_processes
                     : 0;
}

std::optional<std::uint64_t> GpuMemoryLedger::usable(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    if (!gpu.total) {
        return std::nullopt;
    }
    return *gpu.total > gpu.driver ? *gpu.total - gpu.driver : 0;
}

std::uint64_t GpuMemoryLedger::reserved(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    std::uint64_t sum = 0;
    for (const auto& [id, hold] : gpu.holds) {
        sum += hold.reserved.value_or(gpu.total.value_or(0));
    }
    return sum;
}

std::uint64_t GpuMemoryLedger::counted(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    std::uint64_t sum = 0;
    for (const auto& [id, hold] : gpu.holds) {
        sum += std::max(hold.reserved.value_or(gpu.total.value_or(0)), hold.observed);
    }
    return sum;
}

std::optional<std::uint64_t> GpuMemoryLedger::available(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    if (!gpu.total) {
        return std::nullopt;
    }
    const auto taken = gpu.foreign + counted(slot) + gpu.promised_elsewhere;
    if (held_whole(slot) || taken >= *gpu.total || taken < gpu.promised_elsewhere) {
        return 0;
    }
    return *gpu.total - taken;
}

std::optional<std::uint64_t> GpuMemoryLedger::reservation(GpuSlot slot, AllocationId id) const
{
    const auto& holds = m_gpus.at(slot).holds;
    const auto found = holds.find(id);
    return found == holds.end() ? std::nullopt : found->second.reserved;
}

bool GpuMemoryLedger::within_total(GpuSlot slot) const
{
    const auto& gpu = m_gpus.at(slot);
    const auto taken = gpu.foreign + counted(slot) + gpu.promised_elsewhere;
    return gpu.total && taken >= gpu.promised_elsewhere && taken <= *gpu.total;
}

bool GpuMemoryLedger::held_whole(GpuSlot slot) const
{
    const auto& holds = m_gpus.at(slot).holds;
    return std::any_of(holds.begin(), holds.end(),
                       [](const auto& held) { return !held.second.reserved; });
}

std::uint64_t GpuMemoryLedger::peak(AllocationId id) const
{
    const auto found = m_peaks.find(id);
    return found == m_peaks.end() ? 0 : found->second;
}

} // namespace gpusched
