#pragma once

#include <gpusched/gpu_discovery.hpp>
#include <gpusched/sys/host_leases.hpp>
#include <gpusched/sys/lease_overview.hpp>

#include <CLI/App.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gpusched::cli {

// --lock-dir, shared by the commands that take or show leases; GPUSCHED_LOCK_DIR sets it too.
CLI::Option* add_lock_dir_option(CLI::App& app, std::string& lock_dir);

// What each GPU id is leased under: UUIDs for the indices the probe finds (asked only when
// some id is an index), else the ids themselves.
std::vector<std::string> lease_keys_for(const std::vector<std::string>& ids, GpuProbe& probe);

// The GPUs `status` and `serve` show: those of --gpus (`gpus`), else every GPU CUDA lists
// (and then every other GPU leased, see read_lease_overview).
std::vector<sys::ShownGpu> gpus_to_show(const std::vector<std::string>& gpus, GpuProbe& probe);
// The GPUs `ids` (resolved already) with their lease keys.
std::vector<sys::ShownGpu> shown_gpus(const std::vector<std::string>& ids, GpuProbe& probe);

// This process's leases on `ids`, in the space `lock_dir` names, their records kept there.
std::unique_ptr<sys::HostLeases>
open_host_leases(const std::string& lock_dir, const std::vector<std::string>& ids, GpuProbe& probe);

} // namespace gpusched::cli
