#pragma once

#include <gpusched/json_output.hpp>
#include <gpusched/lease_names.hpp>
#include <gpusched/lease_record.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// A GPU as shown: its id (the index where CUDA lists it) and what it is leased under.
struct ShownGpu {
    std::string id;
    std::string key;
};

// The memory shares of a GPU that one process holds for its jobs (lease_memory_share_name):
// how many jobs, and the memory promised to them in all. Who it is comes from the share names
// and /proc: information only, as anyone may bind such a name.
struct MemorySharesView {
    long pid = 0;
    std::optional<unsigned> uid; // of the process, while it runs
    std::string user;
    std::size_t jobs = 0;
    std::uint64_t reserved = 0;
};

// One GPU's host-wide lease as read now.
struct GpuLeaseView {
    ShownGpu gpu;
    bool leased = false;
    LeaseOwner owner;
    std::size_t mig_shares = 0; // MIG instances of the GPU leased (each holds a share of it)
    std::vector<MemorySharesView> memory_shares; // by pid, while it is shared by memory
};

// The GPU memory promised to the jobs that hold it (--mem), in bytes: by its holder's record,
// or by its memory shares. Nothing where none of them asked for memory, where it is free, and
// where the sum is more than any job may ask (k_most_job_memory): a forged record's or name's.
std::optional<std::uint64_t> reserved_memory(const GpuLeaseView& view);

// A process waiting for leases: its name says so (lease_wait_name), the kernel tells who.
struct LeaseWaitView {
    LeaseWaitName wait;
    std::optional<LeaseTaker> who;
};

// Who holds and who waits for the GPUs of one lease space, as `gpusched status` and
// `gpusched serve` show it: one read of the bound lease names and of the lock directory.
struct LeaseOverview {
    std::vector<GpuLeaseView> gpus;
    std::vector<LeaseWaitView> waits; // first come first
};

// The leases of `gpus`, and with `add_others` those of every other GPU leased now or with a
// record file (leased by id on a machine without CUDA, or by another id).
LeaseOverview read_lease_overview(const std::filesystem::path& lock_dir, std::vector<ShownGpu> gpus,
                                  bool add_others);

// The JSON of `gpusched status --json` (docs/json.md): {"gpus": [...], "waiters": [...]}
// into `document`.
void add_lease_overview_json(const LeaseOverview& overview, Json& document);

// How far a lease's record can be trusted, as one word for scripts.
const char* record_check_word(RecordCheck check);

} // namespace gpusched::sys
