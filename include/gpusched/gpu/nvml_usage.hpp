#pragma once

#include <gpusched/gpu_usage.hpp>

#include <string>
#include <vector>

namespace gpusched::gpu {

// Reads memory use and compute processes of the GPUs `ids` (indices, GPU- or MIG- UUIDs)
// through NVML, loaded at run time from the driver's libnvidia-ml.so.1: there is no build
// dependency, and where the library is absent the report says so. NVML opens the GPU's
// device files, so only a short-lived child calls this, never the scheduler.
UsageReport nvml_usage(const std::vector<std::string>& ids);

} // namespace gpusched::gpu
