#pragma once

#include <gpusched/gpu_discovery.hpp>

namespace gpusched::gpu {

// The GPUs through the driver's own API (libcuda.so.1: cuInit, cuDeviceGetCount, ...),
// loaded at run time, for drivers older than the CUDA runtime gpusched links: such a runtime
// refuses to start, but the driver still answers. Numbered as the runtime numbers them: in PCI
// bus order with CUDA_DEVICE_ORDER=PCI_BUS_ID, which gpusched's probes and jobs get by default.
GpuInventory driver_api_inventory();

// The GPUs through NVML (libnvidia-ml.so.1), which numbers them in PCI bus order whatever
// CUDA_DEVICE_ORDER says: the last way, where libcuda.so.1 cannot be used.
GpuInventory nvml_inventory();

// Marks the GPUs of `inventory` whose MIG mode is enabled and lists their MIG instances,
// through NVML whichever way listed the GPUs (CUDA lists a MIG instance only where
// CUDA_VISIBLE_DEVICES names it). GPUs are matched by UUID. Empty, or why MIG instances could
// not be listed; the GPUs stay listed either way.
std::string add_mig_instances(GpuInventory& inventory);

} // namespace gpusched::gpu
