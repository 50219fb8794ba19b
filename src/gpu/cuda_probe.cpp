// The only file that includes the CUDA runtime's header.
#include <gpusched/gpu/cuda_probe.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

namespace gpusched::gpu {

DeviceCount count_devices_in_this_process()
{
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
        return {0, fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(error))};
    }
    return {count, {}};
}

} // namespace gpusched::gpu
