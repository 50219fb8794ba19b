// A fake libnvidia-ml.so.1: the NVML calls gpusched makes, with the C interface of nvml.h (NVML
// API version 12; the header is not installed here, so the few types are declared below),
// answering from the machine that fake_gpu_config.hpp describes. gpusched's probe children load
// it through LD_LIBRARY_PATH as they would load the driver's.
#include "fake_gpu_config.hpp"

#include <cstdint>
#include <cstring>
#include <string>

using fake_gpu::fails;
using fake_gpu::read_config;

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
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

constexpr unsigned long long k_mib = 1024ULL * 1024ULL;
bool initialised = false;

// A handle is the GPU's NVML index plus one, so that no handle is null.
nvmlDevice_t handle_of(std::size_t index)
{
    return reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index + 1));
}

nvmlReturn_t check(const char* function)
{
    if (fails(read_config(), function)) {
        return NVML_ERROR_UNKNOWN;
    }
    return initialised ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

// The GPU a handle names, in NVML's (PCI) order; false for a handle this library never gave.
bool find(nvmlDevice_t device, fake_gpu::Gpu& gpu)
{
    const auto index = reinterpret_cast<std::uintptr_t>(device);
    const auto gpus = fake_gpu::in_pci_order(read_config());
    if (index == 0 || index > gpus.size()) {
        return false;
    }
    gpu = gpus[index - 1];
    return true;
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
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length)
{
    fake_gpu::Gpu gpu;
    if (const auto error = check("nvmlDeviceGetUUID"); error != NVML_SUCCESS) {
        return error;
    }
    return find(device, gpu) ? copy(gpu.uuid, uuid, length) : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length)
{
    fake_gpu::Gpu gpu;
    if (const auto error = check("nvmlDeviceGetName"); error != NVML_SUCCESS) {
        return error;
    }
    return find(device, gpu) ? copy(gpu.name, name, length) : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
{
    fake_gpu::Gpu gpu;
    if (const auto error = check("nvmlDeviceGetMemoryInfo"); error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, gpu) || memory == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    memory->total = gpu.total_mib * k_mib;
    memory->used = gpu.used_mib * k_mib;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* processes)
{
    fake_gpu::Gpu gpu;
    if (const auto error = check("nvmlDeviceGetComputeRunningProcesses_v3");
        error != NVML_SUCCESS) {
        return error;
    }
    if (!find(device, gpu) || count == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    const auto needed = static_cast<unsigned int>(gpu.pids.size());
    if (*count < needed || (needed > 0 && processes == nullptr)) {
        *count = needed;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < needed; ++i) {
        processes[i] = nvmlProcessInfo_t{gpu.pids[i], 0, 0xFFFFFFFF, 0xFFFFFFFF};
    }
    *count = needed;
    return NVML_SUCCESS;
}

} // extern "C"
