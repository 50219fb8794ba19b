#include "gpus_command.hpp"

#include "gpu_ids_option.hpp"
#include "lease_options.hpp"
#include "option_values.hpp"

#include <gpusched/json_output.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/gpu_discovery.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/sys/lease_overview.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>

namespace gpusched::cli {
namespace {

constexpr std::uint64_t k_mib = 1024 * 1024;

// A process's command name; null where it cannot be read (gone, or in another PID namespace),
// as the JSON vocabulary has it for what is not known.
Json command_of(int pid)
{
    std::ifstream comm(fmt::format("/proc/{}/comm", pid));
    std::string name;
    std::getline(comm, name);
    return name.empty() ? Json(nullptr) : Json(name);
}

} // namespace

CLI::App* add_gpus_command(CLI::App& app, GpusOptions& options)
{
    auto* gpus = app.add_subcommand(
        "gpus", "List the GPUs a run would use (MIG instances where MIG is enabled): id, UUID, "
                "name, memory, MIG, processes (NVML)");
    add_gpu_ids_option(*gpus, options.gpus, "The GPU ids to list, as for a run");
    gpus->add_flag("--json", options.json, "Print JSON instead of a table");
    gpus->add_option("--probe-timeout", options.probe_timeout_seconds,
                     "How long to wait for the CUDA and NVML probes")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str();
    add_lock_dir_option(*gpus, options.lock_dir);
    return gpus;
}

int run_gpus(const GpusOptions& options)
{
    // Signals are taken while the probes run, so that they act at once: see wait_for_answer.
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};
    const auto timeout = to_milliseconds(options.probe_timeout_seconds);
    sys::CudaProbeChild probe(timeout, signals);
    check_gpu_ids(options.gpus, gpu_ids_source(options.gpus));
    const auto ids = value_or_usage_error(
        resolve_gpu_ids(options.gpus, environment_variable("CUDA_VISIBLE_DEVICES"), probe));
    const auto inventory = probe.inventory();
    const auto usage = sys::UsageProbeChild(timeout, signals).usage(ids);
    // What the jobs that hold each GPU were promised (--mem), by their lease records.
    const auto leases = sys::read_lease_overview(options.lock_dir, shown_gpus(ids, probe), false);

    Json listed = Json::array();
    for (std::size_t slot = 0; slot < ids.size(); ++slot) {
        const auto& id = ids[slot];
        const auto reserved = sys::reserved_memory(leases.gpus[slot]);
        Json entry = {{"id", id},
                      {"index", nullptr},
                      {"uuid", nullptr},
                      {"name", nullptr},
                      {"memory_total_mib", nullptr},
                      {"memory_used_mib", nullptr},
                      {"memory_reserved_mib",
                       reserved ? Json(mebibytes_rounded_up(*reserved)) : Json(nullptr)},
                      {"utilization_percent", nullptr},
                      {"temperature_celsius", nullptr},
                      {"processes", nullptr},
                      {"found_by", nullptr},
                      {"mig", nullptr}};
        if (const auto* gpu = find_gpu(inventory, id)) {
            entry["found_by"] = inventory.source;
            entry["index"] = gpu->index;
            entry["uuid"] = gpu->uuid;
            entry["name"] = gpu->name;
            entry["memory_total_mib"] = gpu->total_memory / k_mib;
            entry["mig"] = {{"mode", gpu->mig_enabled ? "enabled" : "disabled"}};
        } else if (const auto* mig = id.starts_with("MIG-") ? find_mig(inventory, id) : nullptr) {
            entry["found_by"] = inventory.source;
            entry["uuid"] = mig->uuid;
            entry["name"] = mig->name;
            entry["memory_total_mib"] = mig->total_memory / k_mib;
            entry["mig"] = {{"parent_index", mig->parent_index},
                            {"parent_uuid", mig->parent_uuid},
                            {"device", mig->device},
                            {"gpu_instance", mig->gpu_instance},
                            {"compute_instance", mig->compute_instance}};
        }
        if (const auto found = usage.gpus.find(id); found != usage.gpus.end()) {
            entry["memory_used_mib"] = found->second.used_memory / k_mib;
            entry["memory_total_mib"] = found->second.total_memory / k_mib;
            const auto known = [](const std::optional<unsigned>& value) {
                return value ? Json(*value) : Json(nullptr);
            };
            entry["utilization_percent"] = known(found->second.utilization_percent);
            entry["temperature_celsius"] = known(found->second.temperature_celsius);
            entry["processes"] = Json::array();
            for (const auto& process : found->second.processes) {
                entry["processes"].push_back({{"pid", process.pid},
                                              {"command", command_of(process.pid)},
                                              {"memory_used_mib", process.used_memory / k_mib}});
            }
        }
        listed.push_back(std::move(entry));
    }
    if (!usage.problem.empty()) {
        fmt::print(stderr, "gpusched: memory use and processes unknown: {}\n", usage.problem);
    }
    if (!inventory.source.empty()) {
        fmt::print(stderr, "gpusched: GPUs listed through the {}\n", inventory.source);
    } else if (!inventory.problem.empty()) {
        fmt::print(stderr, "gpusched: GPUs not listed: {}\n", inventory.problem);
    }
    if (options.json) {
        auto document = json_document("gpus");
        document["gpus"] = std::move(listed);
        fmt::print("{}", format_json(document));
        return k_exit_success;
    }
    const auto text = [](const Json& value) {
        return value.is_null()     ? std::string("?")
               : value.is_string() ? value.get<std::string>()
                                   : value.dump();
    };
    // A MIG instance's id is its UUID: the ID column is as wide as the longest id.
    std::size_t id_width = 8;
    for (const auto& entry : listed) {
        id_width = std::max(id_width, text(entry["id"]).size());
    }
    const auto mig_text = [](const Json& mig) -> std::string {
        if (mig.is_null()) {
            return "?";
        }
        if (mig.contains("mode")) {
            return mig["mode"] == "enabled" ? "enabled" : "-";
        }
        return fmt::format("GPU {} device {} (GI {}, CI {})", mig["parent_index"].get<int>(),
                           mig["device"].get<int>(), mig["gpu_instance"].get<unsigned>(),
                           mig["compute_instance"].get<unsigned>());
    };
    fmt::print("{:<{}} {:<40} {:<24} {:>17}  {:>12}  {:<32}  {}\n", "ID", id_width, "UUID", "NAME",
               "MEMORY USED/TOTAL", "RESERVED", "MIG", "PROCESSES");
    for (const auto& entry : listed) {
        std::string processes = "?";
        if (entry["processes"].is_array()) {
            processes.clear();
            for (const auto& process : entry["processes"]) {
                processes += fmt::format("{}{} ({})", processes.empty() ? "" : ", ",
                                         process["pid"].get<int>(),
                                         process["command"].is_string()
                                             ? visible_text(process["command"].get<std::string>())
                                             : std::string("?"));
            }
            processes = processes.empty() ? "none" : processes;
        }
        const auto& reserved = entry["memory_reserved_mib"];
        fmt::print("{:<{}} {:<40} {:<24} {:>17}  {:>12}  {:<32}  {}\n", text(entry["id"]), id_width,
                   text(entry["uuid"]), text(entry["name"]),
                   fmt::format("{}/{} MiB", text(entry["memory_used_mib"]),
                               text(entry["memory_total_mib"])),
                   reserved.is_null() ? "-" : fmt::format("{} MiB", reserved.get<std::uint64_t>()),
                   mig_text(entry["mig"]), processes);
    }
    return k_exit_success;
}

} // namespace gpusched::cli
