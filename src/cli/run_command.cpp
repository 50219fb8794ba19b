#include "run_command.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/job_runner.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>

extern char** environ;

namespace gpusched::cli {
namespace {

// Commands held while every GPU is busy: enough that a freed GPU never waits for a read,
// few enough that memory stays flat for any input length.
constexpr std::size_t k_min_read_ahead = 64;

std::chrono::milliseconds to_milliseconds(double seconds)
{
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

void check_shell(const std::string& shell)
{
    if (shell.empty() || shell.front() != '/' || access(shell.c_str(), X_OK) != 0) {
        throw UsageError(
            fmt::format("--shell {}: not an absolute path to an executable file", shell));
    }
}

// CLI11 gives --gpus every argument up to the next option, so in `--gpus 0 1 cmds.txt` it
// would take the file for a GPU. After the first, arguments that are not GPU ids are inputs.
void move_inputs_out_of_gpus(RunOptions& options)
{
    const auto first_input =
        std::find_if(options.gpus.begin() + (options.gpus.empty() ? 0 : 1), options.gpus.end(),
                     [](const auto& token) { return !looks_like_gpu_ids(token); });
    options.inputs.insert(options.inputs.end(), std::make_move_iterator(first_input),
                          std::make_move_iterator(options.gpus.end()));
    options.gpus.erase(first_input, options.gpus.end());
}

std::optional<std::string> environment_variable(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

} // namespace

void add_run_options(CLI::App& app, RunOptions& options)
{
    app.add_option("FILE", options.inputs,
                   "Command files read in order ('-' is stdin; default: stdin). A named pipe is "
                   "a live queue that stays open until gpusched is signalled.");
    app.add_option("-g,--gpus", options.gpus,
                   "GPU ids to use: '0 1 2', '0,1,2', ranges '0-3', or ids such as GPU-<uuid> "
                   "and MIG-<uuid>, passed to jobs unchanged. Default: $CUDA_VISIBLE_DEVICES, "
                   "else every GPU CUDA finds.")
        ->expected(1, -1);
    app.add_option("--fifo", options.fifo,
                   "Also read commands from this named pipe, created (mode 0600) if missing; "
                   "writers may come and go until gpusched is signalled.");
    app.add_option("--shell", options.shell, "Shell that runs each command as SHELL -c COMMAND")
        ->capture_default_str();
    app.add_option("--kill-after", options.kill_after_seconds,
                   "Seconds between passing SIGINT/SIGTERM on to the jobs and killing them")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--probe-timeout", options.probe_timeout_seconds,
                   "Seconds to wait for the CUDA probe that counts the GPUs")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    auto* quiet = app.add_flag("-q,--quiet", options.quiet, "Log only errors, not each job");
    app.add_flag("-v,--verbose", options.verbose, "Log debugging detail")->excludes(quiet);
}

int run_scheduler(RunOptions options)
{
    move_inputs_out_of_gpus(options);
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    } else if (options.verbose) {
        spdlog::set_level(spdlog::level::debug);
    }
    check_shell(options.shell);

    // Children must be reapable even if our parent set SIGCHLD to SIG_IGN; then block the
    // signals we handle, before anything else can start a thread.
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE};

    sys::InputReader input(options.inputs, options.fifo);
    sys::ProbeChild probe(to_milliseconds(options.probe_timeout_seconds));
    auto gpu_ids = value_or_usage_error(
        resolve_gpu_ids(options.gpus, environment_variable("CUDA_VISIBLE_DEVICES"), probe));
    const std::size_t read_ahead = std::max(k_min_read_ahead, 2 * gpu_ids.size());
    spdlog::debug("GPUs: {}; shell {}; reading up to {} commands ahead", fmt::join(gpu_ids, ", "),
                  options.shell, read_ahead);
    Scheduler scheduler(GpuPool(std::move(gpu_ids)), read_ahead);
    const JobEnvironment environment(environ);
    const sys::JobSpawner spawner(options.shell, signals.original_mask());
    sys::JobRunner runner(scheduler, input, signals, spawner, environment,
                          to_milliseconds(options.kill_after_seconds));
    return runner.run();
}

} // namespace gpusched::cli
