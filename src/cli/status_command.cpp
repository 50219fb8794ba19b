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
#include <gpusched/sys/lease_overview.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/visible_text.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <csignal>

namespace gpusched::cli {
namespace {

std::string local_time(double since)
{
    return fmt::format("{:%Y-%m-%d %H:%M:%S}", local_time_of(since));
}

// The holders' names and commands are theirs to choose (a record is anyone's to write): each
// is shown with visible_text, so that none of them acts on the terminal of who reads it.
void print_row(const sys::GpuLeaseView& lease)
{
    const auto& gpu = lease.gpu;
    constexpr auto k_row = "{:<6} {:<7} {:<10} {:>8}  {:<19}  {}\n";
    if (!lease.leased && lease.mig_shares > 0) {
        fmt::print("{:<6} free    ({} MIG instance{} of it leased: not free as a whole)\n", gpu.id,
                   lease.mig_shares, lease.mig_shares == 1 ? "" : "s");
        return;
    }
    if (!lease.leased && !lease.memory_shares.empty()) {
        for (const auto& shares : lease.memory_shares) {
            fmt::print(
                k_row, gpu.id, "shared",
                shares.user.empty() ? std::string("?") : visible_text(shares.user), shares.pid, "",
                fmt::format("({} sharing it by memory, {} promised)", counted(shares.jobs, "job"),
                            format_memory_size(shares.reserved)));
        }
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
            fmt::print(k_row, gpu.id, "leased", visible_text(owner.taker->user), owner.taker->pid,
                       "", why);
        } else {
            fmt::print(k_row, gpu.id, "leased", "?", "?", "", why);
        }
        return;
    }
    const auto& record = *owner.record;
    if (record.jobs.empty()) {
        fmt::print(k_row, gpu.id, "leased", visible_text(record.user), record.gpusched_pid, "",
                   "(between jobs, or held by what an ended job left running)");
    }
    for (const auto& job : record.jobs) {
        auto command = visible_text(job.command);
        if (job.memory) {
            command = fmt::format("[{}] {}", format_memory_size(*job.memory), command);
        }
        fmt::print(k_row, gpu.id, "leased", visible_text(record.user), job.pid,
                   local_time(job.since),
                   owner.check == RecordCheck::unverified ? "(unverified) " + command : command);
    }
    if (record.queued) {
        fmt::print(k_row, "", "", "", "", "",
                   fmt::format("({} of gpusched pid {} still queued)", counted(*record.queued, "job"),
                               record.gpusched_pid));
    }
}

void print_wait(const sys::LeaseWaitView& shown)
{
    fmt::print("waiting: {} (pid {}) since {}, for {}\n",
               shown.who ? visible_text(shown.who->user) : std::string("?"), shown.wait.pid,
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
    // Signals are taken while the probe runs, so that they act at once: see wait_for_answer.
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};
    sys::CudaProbeChild probe(to_milliseconds(options.probe_timeout_seconds), signals);
    const auto overview = sys::read_lease_overview(
        options.lock_dir, gpus_to_show(options.gpus, probe), options.gpus.empty());
    if (options.json) {
        auto document = json_document("status");
        sys::add_lease_overview_json(overview, document);
        fmt::print("{}", format_json(document));
        return k_exit_success;
    }
    fmt::print("{:<6} {:<7} {:<10} {:>8}  {:<19}  {}\n", "GPU", "STATE", "USER", "PID", "SINCE",
               "COMMAND");
    for (const auto& gpu : overview.gpus) {
        print_row(gpu);
    }
    // Those who wait come after the GPUs, first come first.
    for (const auto& wait : overview.waits) {
        print_wait(wait);
    }
    return k_exit_success;
}

} // namespace gpusched::cli
