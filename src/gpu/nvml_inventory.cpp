#include <gpusched/gpu/fallback_inventory.hpp>

#include "nvml_library.hpp"

#include <fmt/format.h>

#include <algorithm>
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

namespace {

// One MIG instance, or why it could not be read.
std::string read_mig(const nvml::Library& library, nvml::Device device, MigInfo& mig)
{
    std::array<char, nvml::k_uuid_length> uuid{};
    std::array<char, nvml::k_name_length> name{};
    nvml::Memory memory{};
    unsigned int gpu_instance = 0;
    unsigned int compute_instance = 0;
    auto code = library.uuid(device, uuid.data(), nvml::k_uuid_length);
    const char* call = "nvmlDeviceGetUUID";
    if (code == nvml::k_success) {
        code = library.name(device, name.data(), nvml::k_name_length);
        call = "nvmlDeviceGetName";
    }
    if (code == nvml::k_success) {
        code = library.memory(device, &memory);
        call = "nvmlDeviceGetMemoryInfo";
    }
    if (code == nvml::k_success) {
        code = library.gpu_instance_id(device, &gpu_instance);
        call = "nvmlDeviceGetGpuInstanceId";
    }
    if (code == nvml::k_success) {
        code = library.compute_instance_id(device, &compute_instance);
        call = "nvmlDeviceGetComputeInstanceId";
    }
    if (code != nvml::k_success) {
        return fmt::format("{} of a MIG instance: {}", call, library.error(code));
    }
    mig.uuid = uuid.data();
    mig.name = name.data();
    mig.total_memory = memory.total;
    mig.gpu_instance = gpu_instance;
    mig.compute_instance = compute_instance;
    return {};
}

// The MIG instances of `gpu` (NVML's `device`) where its MIG mode is enabled.
std::string read_migs(const nvml::Library& library, nvml::Device device, GpuInfo& gpu,
                      std::vector<MigInfo>& migs)
{
    unsigned int current = 0;
    unsigned int pending = 0;
    auto code = library.mig_mode(device, &current, &pending);
    if (code == nvml::k_not_supported) {
        return {}; // a GPU without MIG
    }
    if (code != nvml::k_success) {
        return fmt::format("nvmlDeviceGetMigMode({}): {}", gpu.uuid, library.error(code));
    }
    if (current != nvml::k_mig_enabled) {
        return {};
    }
    gpu.mig_enabled = true;
    unsigned int most = 0;
    if (code = library.max_mig_devices(device, &most); code != nvml::k_success) {
        return fmt::format("nvmlDeviceGetMaxMigDeviceCount({}): {}", gpu.uuid, library.error(code));
    }
    int listed = 0;
    for (unsigned int index = 0; index < most; ++index) {
        nvml::Device mig_device = nullptr;
        code = library.mig_by_index(device, index, &mig_device);
        if (code == nvml::k_not_found) {
            continue; // no instance there
        }
        if (code != nvml::k_success) {
            return fmt::format("nvmlDeviceGetMigDeviceHandleByIndex({}, {}): {}", gpu.uuid, index,
                               library.error(code));
        }
        MigInfo mig;
        if (auto problem = read_mig(library, mig_device, mig); !problem.empty()) {
            return problem;
        }
        // Its GPU as NVML says, which must be the one asked: else the instance is not listed.
        nvml::Device parent = nullptr;
        if (library.parent_of_mig(mig_device, &parent) != nvml::k_success || parent != device) {
            continue;
        }
        mig.parent_index = gpu.index;
        mig.parent_uuid = gpu.uuid;
        mig.device = listed++;
        migs.push_back(std::move(mig));
    }
    return {};
}

} // namespace

std::string add_mig_instances(GpuInventory& inventory)
{
    nvml::Library library;
    if (auto problem = nvml::load(library); !problem.empty()) {
        return problem;
    }
    if (!library.has_mig()) {
        return "libnvidia-ml.so.1 lists no MIG instance (it lacks the MIG functions)";
    }
    unsigned int count = 0;
    if (const auto code = library.count(&count); code != nvml::k_success) {
        return fmt::format("nvmlDeviceGetCount: {}", library.error(code));
    }
    std::vector<MigInfo> migs;
    for (unsigned int index = 0; index < count; ++index) {
        nvml::Device device = nullptr;
        std::array<char, nvml::k_uuid_length> uuid{};
        if (library.by_index(index, &device) != nvml::k_success ||
            library.uuid(device, uuid.data(), nvml::k_uuid_length) != nvml::k_success) {
            continue; // a GPU NVML cannot read is not one CUDA listed either
        }
        auto gpu = std::find_if(inventory.gpus.begin(), inventory.gpus.end(),
                                [&](const GpuInfo& listed) { return listed.uuid == uuid.data(); });
        if (gpu == inventory.gpus.end()) {
            continue;
        }
        if (auto problem = read_migs(library, device, *gpu, migs); !problem.empty()) {
            for (auto& listed : inventory.gpus) {
                listed.mig_enabled = false;
            }
            return problem;
        }
    }
    // In the order of the GPUs, as nvidia-smi -L lists them.
    std::stable_sort(migs.begin(), migs.end(), [](const MigInfo& a, const MigInfo& b) {
        return a.parent_index < b.parent_index;
    });
    inventory.migs = std::move(migs);
    return {};
}

} // namespace gpusched::gpu
