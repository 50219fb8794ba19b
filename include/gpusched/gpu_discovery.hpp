#pragma once

#include <gpusched/errors.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// What the CUDA probe found: the number of devices, or why there are none.
struct DeviceCount {
    int count = 0;
    std::string problem; // empty when the probe ran; else why no device could be counted
};

// Counts the GPUs of this machine. The real one runs cudaGetDeviceCount in a short-lived
// child process; tests use a fake, since a GPU is hardware that may be absent.
class GpuProbe {
public:
    virtual ~GpuProbe() = default;
    virtual DeviceCount count_devices() = 0;
};

// The GPU ids jobs are given, by precedence: --gpus tokens; else the entries of the
// scheduler's own CUDA_VISIBLE_DEVICES; else indices 0..N-1 from the probe, which is
// asked only in that last case. No GPU at all is an error that says how to pass --gpus.
Parsed<std::vector<std::string>> resolve_gpu_ids(const std::vector<std::string>& gpus_option,
                                                 const std::optional<std::string>& visible_devices,
                                                 GpuProbe& probe);

} // namespace gpusched
