#include "lease_options.hpp"

#include <gpusched/lease_names.hpp>
#include <gpusched/sys/lock_directory.hpp>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace gpusched::cli {

void add_lock_dir_option(CLI::App& app, std::string& lock_dir)
{
    lock_dir = sys::default_lock_directory().string();
    app.add_option("--lock-dir", lock_dir,
                   "Names the host-wide GPU leases (shared by every user's gpusched) and keeps "
                   "their records")
        ->envname("GPUSCHED_LOCK_DIR")
        ->capture_default_str();
}

std::vector<std::string> lease_keys_for(const std::vector<std::string>& ids, GpuProbe& probe)
{
    if (!has_gpu_indices(ids)) {
        return ids;
    }
    const auto inventory = probe.inventory();
    if (!inventory.problem.empty()) {
        spdlog::debug("GPUs are leased by the ids given: cannot list them ({})", inventory.problem);
    }
    return lease_keys(ids, inventory);
}

std::unique_ptr<sys::HostLeases>
open_host_leases(const std::string& lock_dir, const std::vector<std::string>& ids, GpuProbe& probe)
{
    auto keys = lease_keys_for(ids, probe);
    spdlog::debug("leases in {}: {}", lock_dir, fmt::join(keys, ", "));
    return std::make_unique<sys::HostLeases>(lock_dir, std::move(keys));
}

} // namespace gpusched::cli
