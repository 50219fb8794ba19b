#pragma once

#include <gpusched/gpu_memory.hpp>
#include <gpusched/gpu_pool.hpp>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace gpusched {

// What the Placement learns of the GPUs from looking at their usage (NVML, in a probe child:
// sys::GpuUsageWatch): for --skip-busy, which GPUs became busy with someone else's work, or
// free again; for jobs that ask for memory, each GPU's memory. Its tests pass a fake.
class GpuSamples {
public:
    virtual ~GpuSamples() = default;
    // The GPUs that became usable (true) or not (false) since the last call. A sample is
    // judged here, when `runs_our_jobs(slot)` is up to date: memory our own jobs use does not
    // make a GPU busy.
    virtual std::vector<std::pair<GpuSlot, bool>>
    take_changes(const std::function<bool(GpuSlot)>& runs_our_jobs) = 0;
    // No GPU would get a job from a sample now: the look under way is stopped.
    virtual void stop() = 0;

    // The allocation of our job whose process `pid` is, if any.
    using OwnerOf = std::function<std::optional<AllocationId>(int pid)>;
    // What the last look read of each GPU's memory, once: a reading per GPU it could read,
    // nothing for one it could not (NVML does not know it). Nothing at all when no look has
    // answered since the last call; every GPU unread when looking failed.
    struct MemoryLook {
        std::vector<std::optional<GpuMemoryReading>> gpus;
        // No new reading, and the last is out of date (a look overdue): nothing more is to be
        // promised on it until the next.
        bool stale = false;
    };
    virtual std::optional<MemoryLook> take_memory(const OwnerOf& owner_of) = 0;
};

} // namespace gpusched
