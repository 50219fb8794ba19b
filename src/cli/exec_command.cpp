#include "exec_command.hpp"

#include "gpu_ids_option.hpp"
#include "lease_options.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/gpu_room.hpp>
#include <gpusched/lease_record.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/wall_clock.hpp>
#include <gpusched/sys/lease_acquisition.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/sys/default_signals.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpusched::cli {
namespace {

// "no GPU free", "not 2 GPUs free": what a refused or timed-out wait did not find.
std::string none_free(std::size_t count)
{
    return count == 1 ? "no GPU free" : fmt::format("not {} free", counted(count, "GPU"));
}

// Who holds the GPUs of `slots`, each holder once with its GPUs ("GPU 0,1 by alice's run
// 4242 since 09:30"): in full (each job's pid and command), or short for the line repeated
// while a wait lasts.
enum class HolderDetail { full, short_form };
std::string holders(const sys::HostLeases& leases, const std::vector<std::string>& ids,
                    const GpuSlots& slots, HolderDetail detail)
{
    struct Held {
        std::string blocker; // what is leased, for a MIG instance or its GPU
        std::string holder;
        std::vector<std::string> gpus;
    };
    std::vector<Held> held;
    for (const auto slot : slots) {
        const auto owner = leases.holder(slot);
        Held entry{leases.blocked_by(slot),
                   detail == HolderDetail::full ? describe_lease_holder(owner)
                                                : describe_lease_wait(owner),
                   {}};
        auto found = std::find_if(held.begin(), held.end(), [&](const Held& known) {
            return known.blocker == entry.blocker && known.holder == entry.holder;
        });
        if (found == held.end()) {
            found = held.insert(held.end(), std::move(entry));
        }
        found->gpus.push_back(ids[slot]);
    }
    std::vector<std::string> described;
    for (const auto& [blocker, holder, gpus] : held) {
        described.push_back(fmt::format("GPU {}{} by {}", fmt::join(gpus, ","),
                                        blocker.empty() ? "" : " (" + blocker + ")", holder));
    }
    return fmt::format("{}", fmt::join(described, ", "));
}

// The leases and memory shares go to fds 3, 4, ... (a MIG instance's share right after its
// lease) without close-on-exec, so CMD and its children hold them. Their sources lie above
// all of these.
void hand_over(const sys::HostLeases& leases, const GpuSlots& slots, std::vector<int> fds)
{
    for (const auto slot : slots) {
        leases.append_fds(slot, fds);
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
        const int target = 3 + static_cast<int>(i);
        if (dup2(fds[i], target) != target) {
            throw std::system_error(errno, std::generic_category(), "dup2");
        }
    }
}

// What exec got: the leases, or why not; `memory_short` says each GPU's free memory where
// what was missing was GPUs with room for --mem.
struct Acquired {
    sys::LeaseAcquisition leases;
    std::string memory_short;
    std::vector<int> share_fds; // the memory shares taken instead of leases
};

// exec's one job, as its memory shares name it.
constexpr AllocationId k_exec_job = 1;

// --mem: memory shares of `count` of the GPUs with room, in their order, each admitted while
// the memory still fits beside what the others promised (by the look `usage`). `whole`: one
// of them is to be leased whole instead (a MIG instance, a lease inherited), and no share is
// kept; `no_room`: fewer fit now, and none is kept.
enum class SharesTaken { shared, whole, no_room };
SharesTaken take_shares(sys::HostLeases& leases, const UsageReport& usage,
                        const std::vector<std::string>& ids, const GpuSlots& roomy,
                        std::size_t count, std::uint64_t memory, Acquired& acquired)
{
    const auto let_go = [&] {
        for (const auto slot : acquired.leases.slots) {
            leases.release_share(slot, k_exec_job);
        }
        acquired.leases.slots.clear();
        acquired.share_fds.clear();
    };
    for (const auto slot : roomy) {
        if (acquired.leases.slots.size() == count) {
            break;
        }
        const auto& gpu = usage.gpus.at(ids[slot]);
        const auto fits = [&gpu, memory](std::uint64_t promised) {
            const auto taken = gpu.used_memory + std::min(promised, gpu.total_memory);
            return gpu.total_memory > taken && gpu.total_memory - taken >= memory;
        };
        const auto answer = leases.try_share(slot, k_exec_job, memory, fits, acquired.share_fds);
        if (answer.share == LeaseTable::Share::whole) {
            let_go();
            return SharesTaken::whole;
        }
        if (answer.share == LeaseTable::Share::shared) {
            acquired.leases.slots.push_back(slot);
        }
    }
    if (acquired.leases.slots.size() < count) {
        let_go();
        return SharesTaken::no_room;
    }
    acquired.leases.result = sys::LeaseAcquisition::Result::acquired;
    return SharesTaken::shared;
}

// --mem: leases `count` GPUs that have the memory free, looking at NVML again every second
// while fewer have it (a GPU free of leases but full of someone's work is waited for as a
// leased one is). Each GPU leased is looked at once more: one that a process filled while
// the lease was waited for is let go, and the wait goes on. Where memory cannot be read at
// the first look (no NVML), the GPUs are leased whole, unchecked, as a run's would be; once
// it has been read, a look that fails is waited past, never taken for room.
Acquired acquire_with_room(sys::HostLeases& leases, sys::SignalChannel& signals,
                           sys::AcquireOptions acquire, const ExecOptions& options,
                           const std::vector<std::string>& ids)
{
    const auto memory = *options.memory;
    // However the wait ends, it is no longer said: the command must not be listed as waiting.
    struct RoomWaitSaid {
        sys::HostLeases& leases;
        ~RoomWaitSaid() { leases.set_waiting_for_room(false); }
    } room_wait_said{leases};
    // What is left of --timeout, where one is set.
    const auto time_left = [&]() -> std::optional<std::chrono::milliseconds> {
        if (!acquire.deadline) {
            return std::nullopt;
        }
        return std::chrono::ceil<std::chrono::milliseconds>(*acquire.deadline -
                                                            std::chrono::steady_clock::now());
    };
    // A look waits for NVML no longer than the wait itself may last.
    UsageReport usage;
    bool whole = false; // a GPU with room is to be leased whole: all are, as before shares
    const auto look = [&] {
        auto timeout = to_milliseconds(options.probe_timeout_seconds);
        if (const auto left = time_left()) {
            timeout = std::min(timeout, std::max(*left, std::chrono::milliseconds(1)));
        }
        usage = sys::UsageProbeChild(timeout, signals).usage(ids);
        // What other processes promised their jobs on each GPU (memory shares) is not free.
        std::vector<std::uint64_t> promised(ids.size(), 0);
        for (GpuSlot slot = 0; slot < ids.size() && usage.problem.empty(); ++slot) {
            if (const auto found = usage.gpus.find(ids[slot]); found != usage.gpus.end()) {
                promised[slot] = leases.promised_elsewhere(slot, memory_reading(found->second));
            }
        }
        return gpus_with_room(usage, ids, memory, promised);
    };
    // What each GPU has free, or why that is not known, for the messages.
    const auto free_of = [](const GpuRoom& room) {
        return room.problem.empty() ? room.free : "GPU memory unreadable: " + room.problem;
    };
    auto room = look();
    if (!room.problem.empty()) {
        spdlog::warn("GPU memory is unknown ({}): --mem {} is not checked, and the GPUs are "
                     "leased whole as ever",
                     room.problem, format_memory_size(memory));
        return {sys::acquire_leases(leases, signals, acquire), {}, {}};
    }
    bool said_waiting = false;
    bool said_unreadable = false;
    while (true) {
        if (room.problem.empty() && room.roomy.size() >= options.count && !whole) {
            Acquired shared;
            const auto taken =
                take_shares(leases, usage, ids, room.roomy, options.count, memory, shared);
            if (taken == SharesTaken::shared) {
                return shared;
            }
            whole = taken == SharesTaken::whole;
        }
        if (room.problem.empty() && room.roomy.size() >= options.count && whole) {
            acquire.among = room.roomy;
            auto acquired = sys::acquire_leases(leases, signals, acquire);
            if (acquired.result != sys::LeaseAcquisition::Result::acquired) {
                return {std::move(acquired), {}, {}};
            }
            room = look();
            const bool kept =
                room.problem.empty() &&
                std::all_of(acquired.slots.begin(), acquired.slots.end(), [&](GpuSlot slot) {
                    return std::find(room.roomy.begin(), room.roomy.end(), slot) !=
                           room.roomy.end();
                });
            if (kept) {
                return {std::move(acquired), {}, {}};
            }
            for (const auto slot : acquired.slots) {
                leases.release(slot);
            }
        }
        if (!acquire.wait) {
            return {{sys::LeaseAcquisition::Result::none_free, {}, {}, 0}, free_of(room), {}};
        }
        if (!room.problem.empty()) {
            if (!std::exchange(said_unreadable, true)) {
                spdlog::warn("GPU memory cannot be read now ({}): waiting for a reading",
                             room.problem);
            }
        } else if (!std::exchange(said_waiting, true)) {
            spdlog::info("waiting for {} with {} of memory free ({})",
                         counted(options.count, "GPU"), format_memory_size(memory), room.free);
        }
        leases.set_wanted(options.count);
        leases.set_waiting_for_room(true); // listed by `gpusched status` while it waits
        constexpr auto k_look_every = std::chrono::milliseconds(1000);
        auto wait = k_look_every;
        if (const auto left = time_left()) {
            if (left->count() <= 0) {
                return {{sys::LeaseAcquisition::Result::timed_out, {}, {}, 0}, free_of(room), {}};
            }
            wait = std::min(wait, *left);
        }
        pollfd signal_fd{signals.fd(), POLLIN, 0};
        poll(&signal_fd, 1, static_cast<int>(wait.count()));
        for (const int signal : signals.take_pending()) {
            if (signal != SIGCHLD) {
                return {{sys::LeaseAcquisition::Result::signalled, {}, {}, signal}, {}, {}};
            }
        }
        room = look();
    }
}

// A word, not an option: what starts the command.
bool is_word(const std::string& arg)
{
    return arg.size() < 2 || arg.front() != '-';
}

// The option `arg` (-n, -n2, --count, --count=2) names; for a short flag followed by more
// letters (-qg), the last option of the cluster, which CLI11 reads one letter at a time.
const CLI::Option* option_named(const CLI::App& exec, std::string& arg)
{
    if (arg.starts_with("--")) {
        return exec.get_option_no_throw(arg.substr(0, arg.find('=')));
    }
    const CLI::Option* option = exec.get_option_no_throw(arg.substr(0, 2));
    while (option != nullptr && option->get_items_expected_max() == 0 && arg.size() > 2) {
        arg = "-" + arg.substr(2);
        option = exec.get_option_no_throw(arg.substr(0, 2));
    }
    return option;
}

} // namespace

std::vector<std::string> end_gpu_ids(const CLI::App& exec, std::vector<std::string> args)
{
    const CLI::Option* gpus = exec.get_option_no_throw("--gpus");
    std::size_t next = 0;
    while (next < args.size() && args[next] != "--" && !is_word(args[next])) {
        std::string arg = args[next++];
        const CLI::Option* option = option_named(exec, arg);
        if (option == nullptr || option->get_items_expected_max() == 0) {
            continue; // a flag, or an option CLI11 will say it does not know
        }
        const bool value_attached =
            arg.starts_with("--") ? arg.find('=') != std::string::npos : arg.size() > 2;
        if (!value_attached && next < args.size()) {
            ++next; // its value; --gpus takes its first whatever it is, so `-gpus` is refused
        }
        if (option != gpus) {
            continue;
        }
        while (next < args.size() && looks_like_gpu_ids(args[next])) {
            ++next;
        }
        if (next < args.size() && is_word(args[next])) {
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(next), "--");
            break;
        }
    }
    return args;
}

CLI::App* add_exec_command(CLI::App& app, ExecOptions& options)
{
    auto* exec = app.add_subcommand(
        "exec", "Wait for free GPUs under the host-wide leases, then run a command on them: "
                "gpusched exec [-n N] [--gpus ID...] [--] CMD ARGS...");
    exec->add_option("-n,--count", options.count, "How many GPUs the command gets")
        ->transform(whole_number_check(1, 1024))
        ->type_name("N")
        ->capture_default_str();
    add_gpu_ids_option(*exec, options.gpus,
                       "The GPUs to choose from, as for a run; the ids end at -- or at the first "
                       "word that is not one, which starts CMD (default: $GPUSCHED_GPUS, else "
                       "$CUDA_VISIBLE_DEVICES, else every GPU)");
    exec->add_option("--mem", options.memory,
                     "Take only GPUs with SIZE of memory free (20G, 8000M; less what every "
                     "process uses there and other jobs were promised), waiting while fewer "
                     "have it; the command shares them by memory with other jobs that ask for it")
        ->transform(memory_check(false))
        ->type_name("SIZE");
    exec->add_flag("--no-wait", options.no_wait,
                   "Exit with status 75 at once when not enough GPUs are free");
    exec->add_option("--timeout", options.timeout_seconds,
                     "How long to wait for free GPUs (30s, 10m, 2h, or seconds; 0: not at all) "
                     "before exiting with status 75")
        ->transform(duration_check(true))
        ->type_name("DURATION");
    exec->add_flag("--uuid", options.uuid, "Give the command GPU UUIDs instead of indices");
    exec->add_option("--probe-timeout", options.probe_timeout_seconds,
                     "How long to wait for the CUDA probe that lists the GPUs")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str();
    add_lock_dir_option(*exec, options.lock_dir);
    exec->add_flag("-q,--quiet", options.quiet, "Say nothing while waiting");
    exec->add_option("COMMAND", options.command, "The command and its arguments")
        ->type_name("")
        ->required();
    // Everything from the command on is the command's, `--lr 0.1` included.
    exec->positionals_at_end();
    exec->footer("Examples:\n"
                 "  gpusched exec -- python train.py --lr 0.1\n"
                 "  gpusched exec --mem 20G -- python train.py --batch 64\n"
                 "  gpusched exec -n 2 --gpus 0-3 --timeout 1h -- python train.py --ddp\n\n"
                 "Exit status: the command's; 75 not enough GPUs free (--no-wait, --timeout);\n"
                 "126, 127 the command cannot be run or found; 255 a usage error.\n");
    return exec;
}

int run_exec(const ExecOptions& options)
{
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    }
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};

    check_gpu_ids(options.gpus, gpu_ids_source(options.gpus));
    sys::CudaProbeChild probe(to_milliseconds(options.probe_timeout_seconds), signals);
    const auto ids = value_or_usage_error(resolve_gpu_ids(
        options.gpus, environment_variable("CUDA_VISIBLE_DEVICES"), probe, options.uuid));
    if (options.count > ids.size()) {
        throw UsageError(fmt::format("-n {} is more than the {} to choose from ({})", options.count,
                                     counted(ids.size(), "GPU"), fmt::join(ids, ",")));
    }
    auto leases = open_host_leases(options.lock_dir, ids, probe);
    leases->set_wanted(options.count);

    sys::AcquireOptions acquire;
    acquire.count = options.count;
    acquire.wait = !options.no_wait;
    if (options.timeout_seconds) {
        acquire.deadline =
            std::chrono::steady_clock::now() + to_milliseconds(*options.timeout_seconds);
    }
    acquire.on_wait = [&](const GpuSlots& refused) {
        spdlog::info("waiting for {} (leased: {})", counted(options.count, "GPU"),
                     holders(*leases, ids, refused, HolderDetail::short_form));
    };
    const auto [acquired, memory_short, share_fds] =
        options.memory ? acquire_with_room(*leases, signals, acquire, options, ids)
                       : Acquired{sys::acquire_leases(*leases, signals, acquire), {}, {}};
    // "not 2 GPUs with 20 GiB of memory free", where memory was what they lacked.
    const auto short_of = memory_short.empty() ? none_free(options.count)
                                               : fmt::format("not {} with {} of memory free",
                                                             counted(options.count, "GPU"),
                                                             format_memory_size(*options.memory));
    switch (acquired.result) {
    case sys::LeaseAcquisition::Result::none_free:
        if (!memory_short.empty()) {
            spdlog::error("{} among {} ({})", short_of, fmt::join(ids, ","), memory_short);
        } else {
            spdlog::error("{} among {} (leased: {})", short_of, fmt::join(ids, ","),
                          holders(*leases, ids, acquired.refused, HolderDetail::full));
        }
        return k_exit_temporary_failure;
    case sys::LeaseAcquisition::Result::timed_out:
        spdlog::error("{} within {} s{}", short_of, *options.timeout_seconds,
                      memory_short.empty() ? "" : " (" + memory_short + ")");
        return k_exit_temporary_failure;
    case sys::LeaseAcquisition::Result::signalled:
        return exit_status_for_signal(acquired.signal);
    case sys::LeaseAcquisition::Result::acquired:
        break;
    }

    std::vector<std::string> gpu_ids;
    const LeaseHolder holder{static_cast<long>(getpid()), seconds_since_epoch(),
                             fmt::format("{}", fmt::join(options.command, " ")), options.memory};
    for (const auto slot : acquired.slots) {
        gpu_ids.push_back(ids[slot]);
        leases->describe(slot, {holder}); // a GPU leased whole: a memory share keeps no record
    }
    const auto visible_devices = fmt::format("{}", fmt::join(gpu_ids, ","));
    // About to become CMD: the environment is ours to change now.
    setenv("CUDA_VISIBLE_DEVICES", visible_devices.c_str(), 1);
    setenv("GPUSCHED_GPU", visible_devices.c_str(), 1);
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
    hand_over(*leases, acquired.slots, share_fds);
    sys::reset_signals_for_exec();

    std::vector<char*> argv;
    for (const auto& arg : options.command) {
        argv.push_back(const_cast<char*>(arg.c_str())); // execvp does not write to them
    }
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int error = errno;
    spdlog::error("cannot run {}: {}", options.command.front(), std::strerror(error));
    return error == ENOENT ? k_exit_command_not_found : k_exit_cannot_execute;
}

} // namespace gpusched::cli
