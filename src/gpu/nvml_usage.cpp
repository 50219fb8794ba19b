#include <gpusched/gpu/nvml_usage.hpp>

#include "nvml_library.hpp"

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <array>
#include <memory>
#include <string_view>
#include <vector>

namespace gpusched::gpu {
namespace {

using namespace nvml;

// The GPU named by `id`: its index, its UUID, or the start of its UUID as CUDA takes it
// (GPU-8e6b), which NVML's lookup by UUID does not (the start of several is none of them).
Return find_device(const Library& nvml, const std::string& id, Device* device)
{
    if (const auto index = parse_number<unsigned int>(id)) {
        return nvml.by_index(*index, device);
    }
    const Return whole = nvml.by_uuid(id.c_str(), device);
    unsigned int count = 0;
    if (whole == k_success || !id.starts_with("GPU-") || nvml.count(&count) != k_success) {
        return whole;
    }
    Device named = nullptr;
    for (unsigned int index = 0; index < count; ++index) {
        Device candidate = nullptr;
        std::array<char, k_uuid_length> uuid{};
        if (nvml.by_index(index, &candidate) != k_success ||
            nvml.uuid(candidate, uuid.data(), k_uuid_length) != k_success ||
            !std::string_view(uuid.data()).starts_with(id)) {
            continue;
        }
        if (named != nullptr) {
            return whole;
        }
        named = candidate;
    }
    if (named == nullptr) {
        return whole;
    }
    *device = named;
    return k_success;
}

std::string read_usage(const Library& nvml, const std::string& id, GpuUsage& usage)
{
    Device device = nullptr;
    const Return found = find_device(nvml, id, &device);
    if (found != k_success) {
        return fmt::format("GPU {}: {}", id, nvml.error(found));
    }
    Memory memory{};
    if (const Return code = nvml.memory(device, &memory); code != k_success) {
        return fmt::format("GPU {}: memory: {}", id, nvml.error(code));
    }
    usage.used_memory = memory.used;
    usage.total_memory = memory.total;
    // What the driver cannot tell (a MIG instance, an older GPU) stays unknown.
    if (Utilization busy{}; nvml.utilization && nvml.utilization(device, &busy) == k_success) {
        usage.utilization_percent = busy.gpu;
    }
    if (unsigned int celsius = 0;
        nvml.temperature && nvml.temperature(device, k_temperature_gpu, &celsius) == k_success) {
        usage.temperature_celsius = celsius;
    }
    std::vector<ProcessInfo> processes(16);
    while (true) {
        auto count = static_cast<unsigned int>(processes.size());
        const Return code = nvml.processes(device, &count, processes.data());
        if (code == k_insufficient_size) {
            processes.resize(count + 16u);
            continue;
        }
        if (code != k_success) {
            return fmt::format("GPU {}: processes: {}", id, nvml.error(code));
        }
        for (unsigned int i = 0; i < count; ++i) {
            // NVML_VALUE_NOT_AVAILABLE (all ones) where the driver cannot tell: 0, unknown.
            const auto used = processes[i].used_gpu_memory;
            usage.processes.push_back(
                {static_cast<int>(processes[i].pid), used == ~0ULL ? 0 : used});
        }
        return {};
    }
}

} // namespace

UsageReport nvml_usage(const std::vector<std::string>& ids)
{
    Library nvml;
    if (auto problem = load(nvml); !problem.empty()) {
        return UsageReport{{}, std::move(problem)};
    }
    UsageReport report;
    for (const auto& id : ids) {
        GpuUsage usage;
        if (auto problem = read_usage(nvml, id, usage); !problem.empty()) {
            return UsageReport{{}, std::move(problem)};
        }
        report.gpus.emplace(id, std::move(usage));
    }
    return report;
}

} // namespace gpusched::gpu
