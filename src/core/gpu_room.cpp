#include <gpusched/gpu_room.hpp>

#include <gpusched/memory_size.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace gpusched {

GpuMemoryReading memory_reading(const GpuUsage& gpu)
{
    GpuMemoryReading reading{gpu.total_memory, gpu.used_memory};
    for (const auto& process : gpu.processes) {
        // What the driver keeps is what is used beyond its processes, where each says.
        reading.processes_known = reading.processes_known && process.used_memory > 0;
        reading.by_processes += process.used_memory;
        reading.processes.emplace_back(process.pid, process.used_memory);
    }
    return reading;
}

GpuRoom gpus_with_room(const UsageReport& usage, const std::vector<std::string>& ids,
                       std::uint64_t memory, const std::vector<std::uint64_t>& promised)
{
    GpuRoom room;
    if (!usage.problem.empty()) {
        room.problem = usage.problem;
        return room;
    }
    for (GpuSlot slot = 0; slot < ids.size(); ++slot) {
        const auto found = usage.gpus.find(ids[slot]);
        if (found == usage.gpus.end() || found->second.total_memory == 0) {
            room.problem = fmt::format("NVML does not tell the memory of GPU {}", ids[slot]);
            room.roomy.clear();
            return room;
        }
        const auto& gpu = found->second;
        const auto taken = gpu.used_memory +
                           std::min(slot < promised.size() ? promised[slot] : 0, gpu.total_memory);
        const auto free = gpu.total_memory > taken ? gpu.total_memory - taken : 0;
        if (free >= memory) {
            room.roomy.push_back(slot);
        }
        room.free += fmt::format("{}GPU {}: {} free", room.free.empty() ? "" : ", ", ids[slot],
                                 format_memory_size(free));
    }
    return room;
}

} // namespace gpusched
