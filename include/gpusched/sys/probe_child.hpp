#pragma once

#include <gpusched/gpu_discovery.hpp>

#include <chrono>
#include <optional>

namespace gpusched::sys {

// Lists the GPUs by running this same executable as `gpusched __probe-cuda`, with
// CUDA_DEVICE_ORDER=PCI_BUS_ID unless set, and reading what it prints. The scheduler never
// initialises CUDA itself, and a driver that hangs costs at most `timeout`, after which the
// child is killed. The answer is kept: the GPUs do not change during a run.
class ProbeChild final : public GpuProbe {
public:
    explicit ProbeChild(std::chrono::milliseconds timeout) : m_timeout(timeout) {}
    GpuInventory inventory() override;

private:
    GpuInventory ask_child() const;

    std::chrono::milliseconds m_timeout;
    std::optional<GpuInventory> m_answer;
};

// The probe's side: prints the inventory, or "error: WHY", on stdout; returns the exit status.
int run_probe_and_print();

} // namespace gpusched::sys
