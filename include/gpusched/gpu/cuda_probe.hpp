#pragma once

#include <gpusched/gpu_discovery.hpp>

namespace gpusched::gpu {

// Asks the CUDA runtime for the GPUs in this process. Initialising CUDA costs driver
// threads, memory and open device files, and breaks CUDA in children forked without exec,
// so only the short-lived probe child calls this, never the scheduler.
GpuInventory inventory_in_this_process();

} // namespace gpusched::gpu
