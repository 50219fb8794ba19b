#pragma once

#include <gpusched/gpu_pool.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace gpusched {

// One job's hold on its GPUs, numbered by the Placement: its attempt's, and its leftovers'
// after it (a background process that still runs there) until they end.
using AllocationId = std::uint64_t;

// What a look at a GPU found of its memory (NVML): its total; what is in use, by every
// process of every user and by the driver itself (recent drivers count the memory they keep
// as used); and the part of that used by our jobs' processes, by their allocation.
struct GpuMemoryReading {
    std::uint64_t total = 0;
    std::uint64_t used = 0;
    std::map<AllocationId, std::uint64_t> ours{};
    // What the compute processes of every user use, and whether each said (NVML may not tell
    // a process's use): what is used beyond it is the driver's own, never to be had.
    std::uint64_t by_processes = 0;
    bool processes_known = true;
    // Each compute process's use, by pid: whose jobs use what, for the promises other
    // processes made of the GPU (memory shares, LeaseTable::promised_elsewhere).
    std::vector<std::pair<int, std::uint64_t>> processes{};
};

// What each GPU's memory is promised to, as far as this process can tell: the reservations
// of our jobs on it (bytes, or the whole GPU), and the last look at it. What is left for a new
// job is its total, less what others use (whatever the look saw in use that is not our jobs'),
// less each of our jobs at the larger of its reservation and what the look saw it use. A job
// that has not allocated yet counts at its reservation, so two jobs placed one after the other
// never both count on the same memory; one that uses more than it asked counts at its use.
// What other processes promised their jobs there and those jobs do not use yet (their memory
// shares) is left out too, as told after each look (set_promised_elsewhere).
//
// Pure: the looks are handed in, and each rule is tested in-process (gpu_memory_test.cpp).
class GpuMemoryLedger {
public:
    explicit GpuMemoryLedger(std::size_t gpus) : m_gpus(gpus) {}

    // `bytes` of the GPU promised to the allocation; nothing: the whole GPU, whatever it has.
    void reserve(GpuSlot slot, AllocationId id, std::optional<std::uint64_t> bytes);
    void release(GpuSlot slot, AllocationId id);
    void observe(GpuSlot slot, const GpuMemoryReading& reading);
    // What other processes promised of the GPU beyond what their jobs use now.
    void set_promised_elsewhere(GpuSlot slot, std::uint64_t bytes)
    {
        m_gpus.at(slot).promised_elsewhere = bytes;
    }
    std::uint64_t promised_elsewhere(GpuSlot slot) const
    {
        return m_gpus.at(slot).promised_elsewhere;
    }
    // The bytes promised to an allocation on the GPU; nothing when it has the whole GPU or no
    // hold there.
    std::optional<std::uint64_t> reservation(GpuSlot slot, AllocationId id) const;
    // Nothing is promised beyond what the GPU has, counting others' promises: an allocation
    // made before those were known still fits.
    bool within_total(GpuSlot slot) const;

    // Its total, once a look has read it.
    std::optional<std::uint64_t> total(GpuSlot slot) const { return m_gpus.at(slot).total; }
    // Its total less what its driver keeps, where the look could tell (else its total): the
    // most a job can ever have there.
    std::optional<std::uint64_t> usable(GpuSlot slot) const;
    // What a new job can be promised now: nothing before the first look; 0 while a job of
    // ours has the whole GPU.
    std::optional<std::uint64_t> available(GpuSlot slot) const;
    // What our jobs on it were promised, and what they count for (the larger of that and
    // their use), each job's promise of a whole GPU counted as its total.
    std::uint64_t reserved(GpuSlot slot) const;
    std::uint64_t counted(GpuSlot slot) const;
    // What the last look saw in use on it, by anyone.
    std::uint64_t used(GpuSlot slot) const { return m_gpus.at(slot).used; }
    bool holds_none(GpuSlot slot) const { return m_gpus.at(slot).holds.empty(); }
    // One of our allocations has the whole GPU.
    bool held_whole(GpuSlot slot) const;
    // The most an allocation was seen to use on one of its GPUs so far.
    std::uint64_t peak(AllocationId id) const;
    // Whether another of our allocations was on one of its GPUs at some time while it held it.
    bool shared(AllocationId id) const { return m_shared.contains(id); }

private:
    struct Hold {
        std::optional<std::uint64_t> reserved; // nothing: the whole GPU
        std::uint64_t observed = 0;
    };
    struct Gpu {
        std::optional<std::uint64_t> total;
        std::uint64_t used = 0;
        std::uint64_t foreign = 0; // in use, not by our jobs
        std::uint64_t driver = 0;  // in use by no process: the driver's own
        std::uint64_t promised_elsewhere = 0;
        std::map<AllocationId, Hold> holds;
    };
    std::vector<Gpu> m_gpus;
    std::map<AllocationId, std::uint64_t> m_peaks;
    std::set<AllocationId> m_shared;
};

} // namespace gpusched
