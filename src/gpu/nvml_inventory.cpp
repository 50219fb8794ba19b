#include <gpusched/gpu/fallback_inventory.hpp>

#include "nvml_library.hpp"

#include <fmt/format.h>

#include <array>

namespace gpusched::gpu {

GpuInventory nvml_inventory()
{
    nvml::Library library;
    if (auto problem = nvml::load(library); !problem.empty()) {
        return {{}, std::move(problem)};
    }
    unsigned int count = 0;
    if (const auto code = library.count(&count); code != nvml::k_success) {
        return {{}, fmt::format("nvmlDeviceGetCount: {}", library.error(code))};
    }
    // NVML's indices are nvidia-smi's: PCI bus order, as the runtime's with
    // CUDA_DEVICE_ORDER=PCI_BUS_ID.
    GpuInventory inventory;
    inventory.source = k_source_nvml;
    for (unsigned int index = 0; index < count; ++index) {
        nvml::Device device = nullptr;
        std::array<char, nvml::k_uuid_length> uuid{};
        std::array<char, nvml::k_name_length> name{};
        nvml::Memory memory{};
        auto code = library.by_index(index, &device);
        const char* call = "nvmlDeviceGetHandleByIndex";
        if (code == nvml::k_success) {
            code = library.uuid(device, uuid.data(), nvml::k_uuid_length);
            call = "nvmlDeviceGetUUID";
        }
        if (code == nvml::k_success) {
            code = library.name(device, name.data(), nvml::k_name_length);
            call = "nvmlDeviceGetName";
        }
        if (code == nvml::k_success) {
            code = library.memory(device, &memory);
            call = "nvmlDeviceGetMemoryInfo";
        }
        if (code != nvml::k_success) {
            return {{}, fmt::format("{}({}): {}", call, index, library.error(code))};
        }
        inventory.gpus.push_back(
            GpuInfo{static_cast<int>(index), uuid.data(), name.data(), memory.total});
    }
    return inventory;
}

} // namespace gpusched::gpu
