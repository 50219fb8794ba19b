#pragma once

#include <gpusched/gpu_discovery.hpp>

#include <chrono>

namespace gpusched::sys {

// Counts GPUs by running this same executable as `gpusched __probe-cuda` and reading the
// count it prints. The scheduler never initialises CUDA itself, and a driver that hangs
// costs at most `timeout`, after which the child is killed.
class ProbeChild final : public GpuProbe {
public:
    explicit ProbeChild(std::chrono::milliseconds timeout) : m_timeout(timeout) {}
    DeviceCount count_devices() override;

private:
    std::chrono::milliseconds m_timeout;
};

// The probe's side: prints the count, or "error: WHY", on stdout; returns the exit status.
int run_probe_and_print();

} // namespace gpusched::sys
