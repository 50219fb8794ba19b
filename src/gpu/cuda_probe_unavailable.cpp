// Built in place of cuda_probe.cpp when the CUDA toolkit is absent.
#include <gpusched/gpu/cuda_probe.hpp>

namespace gpusched::gpu {

GpuInventory inventory_in_this_process()
{
    return {{}, "this gpusched was built without CUDA, so it cannot discover GPUs"};
}

} // namespace gpusched::gpu
