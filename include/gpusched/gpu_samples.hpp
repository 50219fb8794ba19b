#pragma once

#include <gpusched/gpu_pool.hpp>

#include <functional>
#include <utility>
#include <vector>

namespace gpusched {

// What --skip-busy learns of the GPUs from looking at their usage (NVML, in a probe child:
// sys::BusyGpuWatch), as the Placement takes it: which GPUs became busy with someone else's
// work, or free again. The Placement's tests pass a fake.
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
};

} // namespace gpusched
