#pragma once

#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_usage.hpp>
#include <gpusched/sys/probe_process.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

class SignalChannel;

// The probe children are this same executable run as `gpusched __probe-cuda` or
// `gpusched __probe-usage IDS...`: the scheduler itself never loads CUDA or NVML, so a driver
// that hangs hangs a child, which is killed after `timeout`. The child gets
// CUDA_DEVICE_ORDER=PCI_BUS_ID unless the user set an order.
ProbeCommand cuda_probe_command(std::chrono::milliseconds timeout);
ProbeCommand usage_probe_command(std::chrono::milliseconds timeout);

// Runs a probe child and waits for what it printed, or why it failed; a stop signal meanwhile
// kills it and throws Interrupted (see wait_for_answer).
ProbeAnswer run_probe_child(const ProbeCommand& command, const std::vector<std::string>& ids,
                            SignalChannel& signals);

// The GPUs, from `gpusched __probe-cuda`; asked once, as the GPUs do not change during a run.
class CudaProbeChild final : public GpuProbe {
public:
    CudaProbeChild(std::chrono::milliseconds timeout, SignalChannel& signals)
        : m_command(cuda_probe_command(timeout)), m_signals(signals)
    {
    }
    GpuInventory inventory() override;

private:
    ProbeCommand m_command;
    SignalChannel& m_signals;
    std::optional<GpuInventory> m_answer;
};

// Memory use and compute processes, from `gpusched __probe-usage IDS...`, for a caller that
// has nothing else to wait for (`gpusched gpus`); a run looks with GpuUsageWatch instead.
class UsageProbeChild final : public UsageProbe {
public:
    UsageProbeChild(std::chrono::milliseconds timeout, SignalChannel& signals)
        : m_command(usage_probe_command(timeout)), m_signals(signals)
    {
    }
    UsageReport usage(const std::vector<std::string>& ids) override;

private:
    ProbeCommand m_command;
    SignalChannel& m_signals;
};

// The children's side: print the answer on stdout and return the exit status.
int print_cuda_inventory();
int print_gpu_usage(const std::vector<std::string>& ids);

} // namespace gpusched::sys
