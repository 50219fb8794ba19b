#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// Index of a GPU in the pool; the id handed to jobs is pool.id(slot).
using GpuSlot = std::size_t;
using GpuSlots = std::vector<GpuSlot>;

// How many jobs of `gpus_per_job` distinct GPUs each fit one after another, where each GPU
// has room for room[i] more jobs: each job takes the GPUs with the most room left, as
// GpuPool::acquire spreads them.
std::size_t jobs_that_fit(std::vector<std::size_t> room, std::size_t gpus_per_job);

// The GPUs jobs may use, each able to take `jobs_per_gpu` jobs at once. The next job goes to
// the least loaded GPU, and among equally loaded ones to the one that has waited longest since
// a job left it (first-in first-out), so work spreads over every GPU instead of piling onto
// the one freed last.
class GpuPool {
public:
    explicit GpuPool(std::vector<std::string> ids, unsigned jobs_per_gpu = 1);

    std::size_t size() const { return m_ids.size(); }
    unsigned jobs_per_gpu() const { return m_jobs_per_gpu; }
    const std::string& id(GpuSlot slot) const { return m_ids.at(slot); }
    const std::vector<std::string>& ids() const { return m_ids; }
    unsigned load(GpuSlot slot) const { return m_gpus.at(slot).load; }
    // The ids of `slots` joined with commas, as CUDA_VISIBLE_DEVICES takes them.
    std::string ids_of(const GpuSlots& slots) const;

    // A GPU that is busy with someone else's work (--skip-busy) gets no job until usable again.
    void set_usable(GpuSlot slot, bool usable) { m_gpus.at(slot).usable = usable; }
    bool usable(GpuSlot slot) const { return m_gpus.at(slot).usable; }
    // A GPU whose host-wide lease another process holds gets no job until it is released.
    void set_leased_elsewhere(GpuSlot slot, bool leased)
    {
        m_gpus.at(slot).leased_elsewhere = leased;
    }
    bool leased_elsewhere(GpuSlot slot) const { return m_gpus.at(slot).leased_elsewhere; }
    // A GPU paused by its queue (`gpusched pause --gpu`) gets no new job; its jobs go on.
    void set_paused(GpuSlot slot, bool paused) { m_gpus.at(slot).paused = paused; }
    bool paused(GpuSlot slot) const { return m_gpus.at(slot).paused; }

    // True when `count` distinct GPUs could take one more job each right now.
    bool can_take(std::size_t count) const;
    // How many jobs of `gpus_per_job` distinct GPUs each could start right now, one after
    // another.
    std::size_t room_for(std::size_t gpus_per_job) const;
    // `count` distinct usable GPUs with room for one more job each, or nothing if there are not
    // that many. GPUs in `avoid` (where the job just failed) are passed over if others will do.
    // With `room`, it says which GPUs have room (memory, not slots: the Placement's rule), of
    // those usable, leased by no other process and not paused.
    std::optional<GpuSlots> acquire(std::size_t count = 1, const GpuSlots& avoid = {},
                                    const std::function<bool(GpuSlot)>& room = {});
    // Usable, leased by no other process and not paused: it may take a job if it has room.
    bool open(GpuSlot slot) const;
    // Releasing a GPU that holds no job is a logic error: the count would go wrong and hand
    // one GPU to too many jobs.
    void release(const GpuSlots& slots);

private:
    bool has_room(GpuSlot slot) const;

    struct Gpu {
        unsigned load = 0;
        unsigned long long last_release = 0; // when a job last left it, in release order
        bool usable = true;
        bool leased_elsewhere = false;
        bool paused = false;
    };

    std::vector<std::string> m_ids;
    unsigned m_jobs_per_gpu;
    std::vector<Gpu> m_gpus;
    unsigned long long m_releases = 0;
};

} // namespace gpusched
