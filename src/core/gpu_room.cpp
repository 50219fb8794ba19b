#include <gpusched/gpu_room.hpp>

#include <gpusched/memory_size.hpp>

#include <fmt/format.h>

namespace gpusched {

GpuRoom gpus_with_room(const UsageReport& usage, const std::vector<std::string>& ids,
                       std::uint64_t memory)
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
        const auto free =
            gpu.total_memory > gpu.used_memory ? gpu.total_memory - gpu.used_memory : 0;
        if (free >= memory) {
            room.roomy.push_back(slot);
        }
        room.free += fmt::format("{}GPU {}: {} free", room.free.empty() ? "" : ", ", ids[slot],
                                 format_memory_size(free));
    }
    return room;
}

} // namespace gpusched
