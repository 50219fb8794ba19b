#include "status_command.hpp"

#include "gpu_ids_option.hpp"
#include "lease_options.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/json_output.hpp>
#include <gpusched/lease_names.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/lease_state.hpp>
#include <gpusched/sys/lock_directory.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <set>

namespace gpusched::cli {
namespace {

// A GPU as shown: its id (the index where CUDA lists it) and what it is leased under.
struct ShownGpu {
    std::string id;
    std::string key;
};

struct ShownLease {
    bool leased = false;
    LeaseOwner owner;
    std::size_t mig_shares = 0; // MIG instances of the GPU leased (each holds a share of it)
};

std::size_t count_shares(const std::string& space, const std::string& key,
                         const std::set<std::string>& held)
{
    if (!may_have_mig_instances(key)) {
        return 0;
    }
    const auto prefix = lease_shares_prefix(space, key);
    return static_cast<std::size_t>(std::count_if(held.begin(), held.end(), [&](const auto& name) {
        return name.starts_with(prefix) && is_lease_share(space, name);
    }));
}

void add_unlisted(std::vector<ShownGpu>& shown, const std::string& key)
{
    const bool listed = std::any_of(shown.begin(), shown.end(),
                                    [&](const ShownGpu& gpu) { return gpu.key == key; });
    if (!listed) {
        shown.push_back({key, key});
    }
}

// The GPUs to show: those named with --gpus, else every GPU CUDA lists, then every other GPU
// leased now or with a record file (leased by id on a machine without CUDA, or by another id).
std::vector<ShownGpu> gpus_to_show(const StatusOptions& options, GpuProbe& probe,
                                   const std::optional<sys::LockDirectory>& directory,
                                   const std::string& space, const std::set<std::string>& held)
{
    std::vector<ShownGpu> shown;
    std::vector<std::string> ids;
    if (!options.gpus.empty()) {
        ids = value_or_usage_error(parse_gpu_list(options.gpus, gpu_ids_source(options.gpus)));
    } else {
        for (const auto& gpu : probe.inventory().gpus) {
            ids.push_back(std::to_string(gpu.index));
        }
    }
    const auto keys = lease_keys_for(ids, probe);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        shown.push_back({ids[i], keys[i]});
    }
    if (!options.gpus.empty()) {
        return shown;
    }
    for (const auto& name : held) {
        if (const auto key = lease_key_of_socket_name(space, name)) {
            add_unlisted(shown, *key);
        }
    }
    if (directory) {
        for (const auto& key : directory->keys()) {
            add_unlisted(shown, key);
        }
    }
    return shown;
}

std::string local_time(double since)
{
    return fmt::format("{:%Y-%m-%d %H:%M:%S}", local_time_of(since));
}

// How far a lease's record can be trusted, as one word for scripts.
const char* record_check_word(RecordCheck check)
{
    switch (check) {
    case RecordCheck::none:
        return "missing";
    case RecordCheck::matches:
        return "matches";
    case RecordCheck::foreign:
        return "foreign";
    case RecordCheck::unverified:
        return "unverified";
    }
    return "unverified";
}

Json user_json(const std::string& user)
{
    return user.empty() ? Json(nullptr) : Json(user);
}

Json to_json(const ShownGpu& gpu, const ShownLease& lease)
{
    Json entry = {{"id", gpu.id},
                  {"key", gpu.key},
                  {"state", lease.leased ? "leased" : "free"},
                  {"mig_instances_leased", lease.mig_shares},
                  {"holder", nullptr},
                  {"record", nullptr}};
    if (!lease.leased) {
        return entry;
    }
    if (const auto& taker = lease.owner.taker) {
        entry["holder"] = {
            {"pid", taker->pid}, {"uid", taker->uid}, {"user", user_json(taker->user)}};
    }
    auto& record = entry["record"] = {{"check", record_check_word(lease.owner.check)},
                                      {"user", nullptr},
                                      {"uid", nullptr},
                                      {"gpusched_pid", nullptr},
                                      {"queued", nullptr},
                                      {"jobs", Json::array()}};
    if (const auto& written = lease.owner.record) {
        record["user"] = user_json(written->user);
        record["uid"] = written->uid;
        record["gpusched_pid"] = written->gpusched_pid;
        if (written->queued) {
            record["queued"] = *written->queued;
        }
        for (const auto& job : written->jobs) {
            record["jobs"].push_back(
                {{"pid", job.pid}, {"command", job.command}, {"started", json_instant(job.since)}});
        }
    }
    return entry;
}

void print_row(const ShownGpu& gpu, const ShownLease& lease)
{
    constexpr auto k_row = "{:<6} {:<7} {:<10} {:>8}  {:<19}  {}\n";
    if (!lease.leased && lease.mig_shares > 0) {
        fmt::print("{:<6} free    ({} MIG instance{} of it leased: not free as a whole)\n", gpu.id,
                   lease.mig_shares, lease.mig_shares == 1 ? "" : "s");
        return;
    }
    if (!lease.leased) {
        fmt::print("{:<6} free\n", gpu.id);
        return;
    }
    const auto& owner = lease.owner;
    if (!owner.record) {
        const auto why = owner.check == RecordCheck::foreign ? "(its record names another process)"
                                                             : "(no record)";
        if (owner.taker) {
            fmt::print(k_row, gpu.id, "leased", owner.taker->user, owner.taker->pid, "", why);
        } else {
            fmt::print(k_row, gpu.id, "leased", "?", "?", "", why);
        }
        return;
    }
    const auto& record = *owner.record;
    if (record.jobs.empty()) {
        fmt::print(k_row, gpu.id, "leased", record.user, record.gpusched_pid, "",
                   "(between jobs, or held by what an ended job left running)");
    }
    for (const auto& job : record.jobs) {
        fmt::print(k_row, gpu.id, "leased", record.user, job.pid, local_time(job.since),
                   owner.check == RecordCheck::unverified ? "(unverified) " + job.command
                                                          : job.command);
    }
    if (record.queued) {
        fmt::print(k_row, "", "", "", "", "",
                   fmt::format("({} of gpusched pid {} still queued)", counted(*record.queued, "job"),
                               record.gpusched_pid));
    }
}

// Who waits for leases of this space: each waiting process binds a name that says so
// (lease_wait_name), and the kernel tells who it is.
struct ShownWait {
    LeaseWaitName wait;
    std::optional<LeaseTaker> who;
};

std::vector<ShownWait> waits_of(const std::string& space, const std::set<std::string>& held)
{
    std::vector<ShownWait> waits;
    for (const auto& name : held) {
        if (const auto wait = parse_lease_wait_name(space, name)) {
            waits.push_back({*wait, sys::ask_lease_taker(name)});
        }
    }
    std::sort(waits.begin(), waits.end(), [](const ShownWait& a, const ShownWait& b) {
        return a.wait.since < b.wait.since;
    });
    return waits;
}

Json to_json(const ShownWait& shown)
{
    return {{"pid", shown.wait.pid},
            {"user", shown.who ? user_json(shown.who->user) : Json(nullptr)},
            {"uid", shown.who ? Json(shown.who->uid) : Json(nullptr)},
            {"since", json_instant(static_cast<double>(shown.wait.since))},
            {"gpu_count", shown.wait.gpus}};
}

void print_wait(const ShownWait& shown)
{
    fmt::print("waiting: {} (pid {}) since {}, for {}\n",
               shown.who ? shown.who->user : std::string("?"), shown.wait.pid,
               local_time(static_cast<double>(shown.wait.since)), counted(shown.wait.gpus, "GPU"));
}

} // namespace

CLI::App* add_status_command(CLI::App& app, StatusOptions& options)
{
    auto* status = app.add_subcommand(
        "status",
        "Show each GPU's host-wide lease: free, or leased by whom, since when, to run what");
    add_gpu_ids_option(*status, options.gpus,
                       "The GPU ids to show (default: $GPUSCHED_GPUS, else every GPU)");
    status->add_flag("--json", options.json, "Print JSON instead of a table");
    status
        ->add_option("--probe-timeout", options.probe_timeout_seconds,
                     "How long to wait for the CUDA probe that lists the GPUs")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str();
    add_lock_dir_option(*status, options.lock_dir);
    return status;
}

int run_status(const StatusOptions& options)
{
    const auto directory = sys::LockDirectory::open_existing(options.lock_dir);
    const auto space = sys::lease_space_of(options.lock_dir);
    const auto bound = sys::bound_lease_names(space).value_or(std::vector<std::string>{});
    const std::set<std::string> held(bound.begin(), bound.end());
    // Signals are taken while the probe runs, so that they act at once: see wait_for_answer.
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};
    sys::CudaProbeChild probe(to_milliseconds(options.probe_timeout_seconds), signals);
    const auto shown = gpus_to_show(options, probe, directory, space, held);

    auto listed = json_document("status");
    auto& gpus_listed = listed["gpus"] = Json::array();
    auto& waiters_listed = listed["waiters"] = Json::array();
    if (!options.json) {
        fmt::print("{:<6} {:<7} {:<10} {:>8}  {:<19}  {}\n", "GPU", "STATE", "USER", "PID", "SINCE",
                   "COMMAND");
    }
    for (const auto& gpu : shown) {
        ShownLease lease;
        const auto name = lease_socket_name(space, gpu.key);
        lease.leased = held.contains(name);
        lease.mig_shares = count_shares(space, gpu.key, held);
        if (lease.leased) {
            lease.owner =
                sys::read_lease_owner(name, -1, directory ? &*directory : nullptr, gpu.key);
        }
        if (options.json) {
            gpus_listed.push_back(to_json(gpu, lease));
        } else {
            print_row(gpu, lease);
        }
    }
    // Those who wait come after the GPUs, first come first.
    for (const auto& wait : waits_of(space, held)) {
        if (options.json) {
            waiters_listed.push_back(to_json(wait));
        } else {
            print_wait(wait);
        }
    }
    if (options.json) {
        fmt::print("{}", format_json(listed));
    }
    return k_exit_success;
}

} // namespace gpusched::cli
