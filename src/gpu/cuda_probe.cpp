// The only file that includes the CUDA runtime's header.
#include <gpusched/gpu/cuda_probe.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <cstring>

namespace gpusched::gpu {

GpuInventory inventory_in_this_process()
{
    int count = 0;
    if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
        return {{}, fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(error))};
    }
    GpuInventory inventory;
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

} // namespace gpusched::gpu
