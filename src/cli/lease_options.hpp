#pragma once

#include <gpusched/gpu_discovery.hpp>
#include <gpusched/sys/host_leases.hpp>

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

// This process's leases on `ids`, in the space `lock_dir` names, their records kept there.
std::unique_ptr<sys::HostLeases>
open_host_leases(const std::string& lock_dir, const std::vector<std::string>& ids, GpuProbe& probe);

} // namespace gpusched::cli
