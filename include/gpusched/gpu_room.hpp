#pragma once

#include <gpusched/gpu_memory.hpp>
#include <gpusched/gpu_pool.hpp>
#include <gpusched/gpu_usage.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched {

// `gpusched exec --mem SIZE`: which of the GPUs `ids` have SIZE of memory free now (their
// total less what every process, the driver's own reserve included, uses, less what other
// processes promised their jobs there and those do not use yet: `promised`, by slot, none
// where empty), by one look of NVML's. Pure: the look is handed in.
struct GpuRoom {
    GpuSlots roomy;   // in the order of `ids`
    std::string free; // "GPU 0: 3 GiB free, GPU 1: 70 GiB free", for what exec says
    // Why memory could not be read (no NVML, a GPU it does not list): then no GPU has room.
    std::string problem;
};

GpuRoom gpus_with_room(const UsageReport& usage, const std::vector<std::string>& ids,
                       std::uint64_t memory, const std::vector<std::uint64_t>& promised = {});

// What a look read of one GPU, as the Placement's ledger and the memory shares take it.
GpuMemoryReading memory_reading(const GpuUsage& gpu);

} // namespace gpusched
