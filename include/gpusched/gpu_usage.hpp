#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// A process computing on a GPU, and the GPU memory it uses there (bytes; 0 where the driver
// does not tell).
struct ComputeProcess {
    int pid = 0;
    std::uint64_t used_memory = 0;
    bool operator==(const ComputeProcess&) const = default;
};

// What NVML tells of one GPU: memory in use and the processes computing on it; how busy and
// how warm it is, where the driver tells (a MIG instance has neither).
struct GpuUsage {
    std::uint64_t used_memory = 0;  // bytes
    std::uint64_t total_memory = 0; // bytes
    std::vector<ComputeProcess> processes;
    std::optional<unsigned> utilization_percent{}; // of the last sample period
    std::optional<unsigned> temperature_celsius{};
};

// Usage by GPU id (an index or a UUID, as jobs are given them), or why none could be read.
struct UsageReport {
    std::map<std::string, GpuUsage> gpus;
    std::string problem; // NVML absent or failing: busy detection is unavailable
};

// Reads GPU usage. The real one runs NVML in a short-lived child process; tests use a fake.
class UsageProbe {
public:
    virtual ~UsageProbe() = default;
    virtual UsageReport usage(const std::vector<std::string>& ids) = 0;
};

// The usage probe's report ("ID\tUSED\tTOTAL\tPID:BYTES,PID:BYTES\tUTIL\tTEMP" per line, "-"
// for what the driver does not tell, or "error: WHY") and back.
std::string format_usage(const UsageReport& report);
UsageReport parse_usage(std::string_view text);

// --skip-busy: a GPU is busy when it has compute processes gpusched did not start, or, while
// no job of gpusched runs on it, more than `max_used_mib` of memory in use.
struct BusyRule {
    std::optional<std::uint64_t> max_used_mib;

    // Why the GPU is busy, or nothing if it is free for a job. `foreign_pids` are the compute
    // processes that are not gpusched's jobs or their descendants.
    std::optional<std::string> busy_reason(const GpuUsage& usage,
                                           const std::vector<int>& foreign_pids,
                                           bool runs_our_jobs) const;
};

} // namespace gpusched
