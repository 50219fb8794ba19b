// The only file that includes the CUDA runtime's header.
#include <gpusched/gpu/cuda_probe.hpp>

#include <gpusched/gpu/fallback_inventory.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include <dlfcn.h>

namespace gpusched::gpu {
namespace {

// The runtime's ways of saying that the driver is older than itself (CUDA 13 needs R580):
// the driver still answers through its own API and NVML.
bool refused_for_driver_version(cudaError_t error)
{
    return error == cudaErrorInsufficientDriver || error == cudaErrorCallRequiresNewerDriver ||
           error == cudaErrorSystemDriverMismatch || error == cudaErrorCompatNotSupportedOnDevice;
}

// Tries the driver API, then NVML; the problem names every way that failed.
GpuInventory inventory_without_runtime(const std::string& runtime_problem)
{
    auto inventory = driver_api_inventory();
    if (!inventory.problem.empty()) {
        auto through_nvml = nvml_inventory();
        if (through_nvml.problem.empty()) {
            return through_nvml;
        }
        inventory.problem = fmt::format("{}; {}; {}", runtime_problem, inventory.problem,
                                        through_nvml.problem);
    }
    return inventory;
}

GpuInventory runtime_inventory(int count)
{
    GpuInventory inventory;
    inventory.source = k_source_cuda_runtime;
    for (int index = 0; index < count; ++index) {
        cudaDeviceProp properties{};
        if (const cudaError_t error = cudaGetDeviceProperties(&properties, index);
            error != cudaSuccess) {
            return {
                {},
                fmt::format("cudaGetDeviceProperties({}): {}", index, cudaGetErrorString(error))};
        }
        unsigned char uuid[16];
        std::memcpy(uuid, properties.uuid.bytes, sizeof uuid);
        inventory.gpus.push_back(
            GpuInfo{index, format_gpu_uuid(uuid), properties.name, properties.totalGlobalMem});
    }
    return inventory;
}

// Why the driver's own library cannot be loaded, where it cannot: a machine with no NVIDIA
// driver, to which the runtime says its driver is "insufficient", which sends people to
// upgrade a driver they do not have.
std::optional<std::string> missing_driver()
{
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver != nullptr) {
        dlclose(driver);
        return std::nullopt;
    }
    const char* why = dlerror();
    return why != nullptr ? std::string(why) : std::string("libcuda.so.1 cannot be loaded");
}

} // namespace

GpuInventory inventory_in_this_process()
{
    int count = 0;
    GpuInventory inventory;
    if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
        if (error == cudaErrorInsufficientDriver) {
            if (const auto why = missing_driver()) {
                return {{},
                        fmt::format("no NVIDIA driver is installed here: {}; GPU ids named by "
                                    "hand are used as written",
                                    *why)};
            }
        }
        auto problem = fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(error));
        if (!refused_for_driver_version(error)) {
            return {{}, std::move(problem)};
        }
        inventory = inventory_without_runtime(problem);
    } else {
        inventory = runtime_inventory(count);
    }
    if (inventory.problem.empty() && !inventory.gpus.empty()) {
        // Without NVML, or with a driver that lists no MIG, the GPUs are still listed: a MIG
        // instance can always be named by its UUID.
        add_mig_instances(inventory);
    }
    return inventory;
}

} // namespace gpusched::gpu
