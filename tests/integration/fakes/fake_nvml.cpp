// A fake libnvidia-ml.so.1: the NVML calls gpusched makes, with the C interface of nvml.h (NVML
// API version 12; the header is not installed here, so the few types are declared below),
// MIG included (a MIG instance's handle answers UUID, name and memory as a GPU's does),
// answering from the machine that fake_gpu_config.hpp describes. gpusched's probe children load
// it through LD_LIBRARY_PATH as they would load the driver's.
#include "fake_gpu_config.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using fake_gpu::fails;
using fake_gpu::read_config;

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
struct nvmlProcessInfo_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

constexpr unsigned int NVML_DEVICE_MIG_DISABLE = 0;
constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
// What an H100 or A100 allows: seven compute slices, so at most seven MIG devices.
constexpr unsigned int k_max_mig_devices = 7;

constexpr unsigned long long k_mib = 1024ULL * 1024ULL;
bool initialised = false;

// A handle is the GPU's NVML index plus one, so that no handle is null; a MIG instance's has
// its place among the GPU's instances, plus one, in the bits above.
constexpr unsigned k_mig_shift = 16;

nvmlDevice_t handle_of(std::size_t index, std::size_t mig = 0)
{
    return reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index + 1) |
                                          (static_cast<std::uintptr_t>(mig) << k_mig_shift));
}

// What a handle names: a GPU, or one of its MIG instances.
struct Target {
    std::size_t index = 0; // the GPU's, in NVML's (PCI) order
    fake_gpu::Gpu gpu;
    const fake_gpu::Mig* mig = nullptr; // into gpu.migs
};

nvmlReturn_t check(const char* function)
{
    if (fails(read_config(), function)) {
        return NVML_ERROR_UNKNOWN;
    }
    return initialised ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

// What a handle names; false for a handle this library never gave (or a MIG instance since
// removed from the machine).
bool find(nvmlDevice_t device, Target& target)
{
    const auto bits = reinterpret_cast<std::uintptr_t>(device);
    const auto index = bits & ((std::uintptr_t{1} << k_mig_shift) - 1);
    const auto mig = bits >> k_mig_shift;
    const auto gpus = fake_gpu::in_pci_order(read_config());
    if (index == 0 || index > gpus.size()) {
        return false;
    }
    target.index = index - 1;
    target.gpu = gpus[index - 1];
    target.mig = nullptr;
    if (mig > 0) {
        if (mig > target.gpu.migs.size()) {
            return false;
        }
        target.mig = &target.gpu.migs[mig - 1];
    }
    return true;
}

// The GPU a handle names, not a MIG instance of it.
bool find_gpu(nvmlDevice_t device, Target& target)
{
    return find(device, target) && target.mig == nullptr;
}

bool find_mig(nvmlDevice_t device, Target& target)
{
    return find(device, target) && target.mig != nullptr;
}

nvmlReturn_t copy(const std::string& text, char* buffer, unsigned int length)
{
    if (buffer == nullptr || text.size() >= length) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    std::memcpy(buffer, text.c_str(), text.size() + 1);
    return NVML_SUCCESS;
}

} // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2()
{
    if (fails(read_config(), "nvmlInit_v2")) {
        return NVML_ERROR_UNKNOWN;
    }
    initialised = true;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown()
{
    initialised = false;
    return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version)
{
    if (version == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *version = read_config().driver_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count)
{
    if (const auto error = check("nvmlDeviceGetCount_v2"); error != NVML_SUCCESS) {
        return error;
    }
    *count = static_cast<unsigned int>(read_config().gpus.size());
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device)
{
    if (const auto error = check("nvmlDeviceGetHandleByIndex_v2"); error != NVML_SUCCESS) {
        return error;
    }
    if (index >= read_config().gpus.size()) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *device = handle_of(index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device)
{
    if (const auto error = check("nvmlDeviceGetHandleByUUID"); error != NVML_SUCCESS) {
        return error;
    }
    const auto gpus = fake_gpu::in_pci_order(read_config());
    for (std::size_t index = 0; index < gpus.size(); ++index) {
        if (uuid != nullptr && gpus[index].uuid == uuid) {
            *device = handle_of(index);
            return NVML_SUCCESS;
        }
        for (std::size_t mig = 0; mig < gpus[index].migs.size(); ++mig) {
            if (uuid != nullptr && gpus[index].migs[mig].uuid == uuid) {
                *device = handle_of(index, mig + 1);
                return NVML_SUCCESS;
            }
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

// UUID, name and memory answer for a MIG instance's handle as for a GPU's, with the instance's.
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetUUID"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target)) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    return copy(target.mig != nullptr ? target.mig->uuid : target.gpu.uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetName"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target)) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    return copy(target.mig != nullptr ? target.mig->name : target.gpu.name, name, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetMemoryInfo"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target) || memory == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    memory->total = (target.mig != nullptr ? target.mig->total_mib : target.gpu.total_mib) * k_mib;
    memory->used = (target.mig != nullptr ? target.mig->used_mib : target.gpu.used_mib) * k_mib;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetUtilizationRates"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target) || utilization == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (target.mig != nullptr || target.gpu.utilization_percent < 0) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    utilization->gpu = static_cast<unsigned int>(target.gpu.utilization_percent);
    utilization->memory = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor,
                                      unsigned int* celsius)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetTemperature"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target) || celsius == nullptr || sensor != 0) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (target.mig != nullptr || target.gpu.temperature_celsius < 0) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    *celsius = static_cast<unsigned int>(target.gpu.temperature_celsius);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetMigMode"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find_gpu(device, target) || current == nullptr || pending == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *current = target.gpu.mig_enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    *pending = *current;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetMaxMigDeviceCount"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find_gpu(device, target) || count == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *count = target.gpu.mig_enabled ? k_max_mig_devices : 0; // as nvml.h says: 0 without MIG
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* mig)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetMigDeviceHandleByIndex"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find_gpu(device, target) || mig == nullptr || index >= k_max_mig_devices) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (!target.gpu.mig_enabled) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    if (index >= target.gpu.migs.size()) {
        return NVML_ERROR_NOT_FOUND;
    }
    *mig = handle_of(target.index, index + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t* device)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
        error != NVML_SUCCESS) {
        return error;
    }
    if (!find_mig(mig, target) || device == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *device = handle_of(target.index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig)
{
    Target target;
    if (const auto error = check("nvmlDeviceIsMigDeviceHandle"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target) || is_mig == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *is_mig = target.mig != nullptr ? 1 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetGpuInstanceId"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find_mig(device, target) || id == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *id = target.mig->gpu_instance;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetComputeInstanceId"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find_mig(device, target) || id == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *id = target.mig->compute_instance;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* processes)
{
    Target target;
    if (const auto error = check("nvmlDeviceGetComputeRunningProcesses_v3");
        error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, target) || count == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    // `process` lines put processes on GPUs; a MIG instance's handle has none of them.
    const auto& listed =
        target.mig != nullptr ? std::vector<fake_gpu::Process>{} : target.gpu.processes;
    const auto needed = static_cast<unsigned int>(listed.size());
    if (*count < needed || (needed > 0 && processes == nullptr)) {
        *count = needed;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < needed; ++i) {
        processes[i] =
            nvmlProcessInfo_t{listed[i].pid, listed[i].used_mib * k_mib, 0xFFFFFFFF, 0xFFFFFFFF};
    }
    *count = needed;
    return NVML_SUCCESS;
}

} // extern "C"
