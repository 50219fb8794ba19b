#include "lease_options.hpp"

#include "gpu_ids_option.hpp"
#include "option_values.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/lease_names.hpp>
#include <gpusched/sys/lock_directory.hpp>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace gpusched::cli {

CLI::Option* add_lock_dir_option(CLI::App& app, std::string& lock_dir)
{
    lock_dir = sys::default_lock_directory().string();
    return app
        .add_option("--lock-dir", lock_dir,
                    "Names the host-wide GPU leases (shared by every user's gpusched) and keeps "
                    "their records")
        ->type_name("DIR")
        ->envname("GPUSCHED_LOCK_DIR")
        ->capture_default_str();
}

namespace {

// The probe is asked only where the ids alone cannot tell: for indices, the start of a UUID,
// and for the GPU of a MIG instance. (A whole GPU's lease needs no list of its MIG instances: it
// finds their shares by its own name.)
GpuInventory inventory_for_leases(const std::vector<std::string>& ids, GpuProbe& probe)
{
    if (!has_gpu_indices(ids) && !has_partial_uuids(ids) && !has_mig_ids(ids)) {
        return {};
    }
    auto inventory = probe.inventory();
    if (!inventory.problem.empty()) {
        spdlog::debug("GPUs are leased by the ids given: cannot list them ({})", inventory.problem);
    }
    return inventory;
}

} // namespace

std::vector<std::string> lease_keys_for(const std::vector<std::string>& ids, GpuProbe& probe)
{
    return lease_keys(ids, inventory_for_leases(ids, probe));
}

std::unique_ptr<sys::HostLeases>
open_host_leases(const std::string& lock_dir, const std::vector<std::string>& ids, GpuProbe& probe)
{
    const auto inventory = inventory_for_leases(ids, probe);
    auto keys = lease_keys(ids, inventory);
    if (const auto problem = lease_keys_problem(ids, keys, inventory)) {
        throw UsageError(*problem);
    }
    auto parents = lease_parents(keys, inventory);
    for (std::size_t slot = 0; slot < keys.size(); ++slot) {
        if (keys[slot].starts_with("MIG-") && parents[slot].empty()) {
            spdlog::warn("GPU {}: NVML does not list this MIG instance, so its GPU is unknown: its "
                         "lease does not exclude a lease on the whole GPU",
                         ids[slot]);
        }
    }
    spdlog::debug("leases in {}: {}", lock_dir, fmt::join(keys, ", "));
    return std::make_unique<sys::HostLeases>(lock_dir, std::move(keys), std::move(parents));
}

std::vector<sys::ShownGpu> gpus_to_show(const std::vector<std::string>& gpus, GpuProbe& probe)
{
    std::vector<std::string> ids;
    if (!gpus.empty()) {
        ids = value_or_usage_error(parse_gpu_list(gpus, gpu_ids_source(gpus)));
    } else {
        for (const auto& gpu : probe.inventory().gpus) {
            ids.push_back(std::to_string(gpu.index));
        }
    }
    return shown_gpus(ids, probe);
}

std::vector<sys::ShownGpu> shown_gpus(const std::vector<std::string>& ids, GpuProbe& probe)
{
    const auto keys = lease_keys_for(ids, probe);
    std::vector<sys::ShownGpu> shown;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        shown.push_back({ids[i], keys[i]});
    }
    return shown;
}

} // namespace gpusched::cli
