#pragma once

#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_usage.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// Runs this same executable as `gpusched ARGS...` (an internal probe command) and returns
// what it printed, or why it failed. The child gets CUDA_DEVICE_ORDER=PCI_BUS_ID unless the
// user set an order, and no CUDA_VISIBLE_DEVICES; it is killed after `timeout`, so a driver
// that hangs cannot hang the scheduler, which itself never loads CUDA or NVML.
struct ProbeAnswer {
    std::string output;
    std::string problem;
};
ProbeAnswer run_probe_child(const std::vector<std::string>& args,
                            std::chrono::milliseconds timeout);

// The GPUs, from `gpusched __probe-cuda`; asked once, as the GPUs do not change during a run.
class CudaProbeChild final : public GpuProbe {
public:
    explicit CudaProbeChild(std::chrono::milliseconds timeout) : m_timeout(timeout) {}
    GpuInventory inventory() override;

private:
    std::chrono::milliseconds m_timeout;
    std::optional<GpuInventory> m_answer;
};

// Memory use and compute processes, from `gpusched __probe-usage IDS...`.
class UsageProbeChild final : public UsageProbe {
public:
    explicit UsageProbeChild(std::chrono::milliseconds timeout) : m_timeout(timeout) {}
    UsageReport usage(const std::vector<std::string>& ids) override;

private:
    std::chrono::milliseconds m_timeout;
};

// The children's side: print the answer on stdout and return the exit status.
int print_cuda_inventory();
int print_gpu_usage(const std::vector<std::string>& ids);

} // namespace gpusched::sys
