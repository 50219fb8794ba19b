#pragma once

// The few parts of NVML's stable C ABI that gpusched uses (NVML API version 12, as nvml.h of
// the R535 and later drivers declares it), declared here so that no NVML header or library is
// needed to build; libnvidia-ml.so.1 is found at run time. Only probe children load it.
#include <string>

namespace gpusched::gpu::nvml {

using Return = int;
constexpr Return k_success = 0;
constexpr Return k_not_supported = 3;
constexpr Return k_not_found = 6;
constexpr Return k_insufficient_size = 7;
constexpr unsigned int k_mig_enabled = 1;   // NVML_DEVICE_MIG_ENABLE
constexpr unsigned int k_uuid_length = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned int k_name_length = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
struct DeviceOpaque;
using Device = DeviceOpaque*;
struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
// nvmlUtilization_t: percent of the last sample period the GPU computed, and its memory was
// read or written.
struct Utilization {
    unsigned int gpu;
    unsigned int memory;
};
constexpr unsigned int k_temperature_gpu = 0; // NVML_TEMPERATURE_GPU

// nvmlProcessInfo_t as the _v2 and _v3 calls fill it.
struct ProcessInfo {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};

// libnvidia-ml.so.1, loaded and initialised; shut down and unloaded with the object.
struct Library {
    void* handle = nullptr;
    Return (*init)() = nullptr;
    Return (*shutdown)() = nullptr;
    const char* (*error_string)(Return) = nullptr;
    Return (*count)(unsigned int*) = nullptr;
    Return (*by_index)(unsigned int, Device*) = nullptr;
    Return (*by_uuid)(const char*, Device*) = nullptr;
    Return (*uuid)(Device, char*, unsigned int) = nullptr;
    Return (*name)(Device, char*, unsigned int) = nullptr;
    Return (*memory)(Device, Memory*) = nullptr;
    Return (*processes)(Device, unsigned int*, ProcessInfo*) = nullptr;
    // MIG (R450 and later); null where the library lacks them, which then lists no instance.
    Return (*mig_mode)(Device, unsigned int* current, unsigned int* pending) = nullptr;
    Return (*max_mig_devices)(Device, unsigned int*) = nullptr;
    Return (*mig_by_index)(Device, unsigned int, Device*) = nullptr;
    Return (*parent_of_mig)(Device, Device*) = nullptr;
    Return (*gpu_instance_id)(Device, unsigned int*) = nullptr;
    Return (*compute_instance_id)(Device, unsigned int*) = nullptr;
    // Optional: how busy and how warm a GPU is (neither is told of a MIG instance).
    Return (*utilization)(Device, Utilization*) = nullptr;
    Return (*temperature)(Device, unsigned int sensor, unsigned int*) = nullptr;
    bool has_mig() const
    {
        return mig_mode != nullptr && max_mig_devices != nullptr && mig_by_index != nullptr &&
               parent_of_mig != nullptr && gpu_instance_id != nullptr &&
               compute_instance_id != nullptr;
    }
    Library() = default;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library();

    std::string error(Return code) const;
};

// Loads and initialises NVML into `nvml`; empty, or why NVML is unavailable.
std::string load(Library& nvml);

} // namespace gpusched::gpu::nvml
