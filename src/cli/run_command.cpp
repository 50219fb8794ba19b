#include "run_command.hpp"

#include "gpu_ids_option.hpp"
#include "help_format.hpp"
#include "lease_options.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/job_environment.hpp>
#include <gpusched/job_request.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/dry_run.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/job_niceness.hpp>
#include <gpusched/sys/job_runner.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/system_process_table.hpp>
#include <gpusched/sys/joblog_file.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/progress_line.hpp>
#include <gpusched/sys/run_guard.hpp>
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

// Bounds of the whole-number options: far beyond real use, they keep a typo from turning
// into billions of slots or tries.
constexpr std::uint64_t k_most_jobs_per_gpu = 1000;
constexpr std::uint64_t k_most_mib = std::uint64_t{1} << 30; // a pebibyte

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

} // namespace

void add_run_options(CLI::App& app, RunOptions& options, bool for_worker)
{
    if (!for_worker) {
        app.add_option("FILE", options.inputs,
                       "Command files read in order ('-' is stdin; default: stdin). A named pipe "
                       "is a live queue that stays open until gpusched is signalled.")
            ->type_name("");
    }
    add_gpu_ids_option(
        app, options.gpus,
        "GPU ids to use: '0 1 2', '0,1,2', ranges '0-3', or GPU-<uuid> and MIG-<uuid> (or "
        "their first hex digits), passed to jobs unchanged; anything else is an error. "
        "Default: $CUDA_VISIBLE_DEVICES, else every GPU CUDA finds.")
        ->group(k_gpus_group);
    if (!for_worker) {
        app.add_option("--fifo", options.fifo,
                       "Also read commands from this named pipe, created (mode 0600) if missing; "
                       "writers may come and go until gpusched is signalled.")
            ->type_name("PATH")
            ->group(k_input_group);
    }
    app.add_option("--shell", options.shell, "Shell that runs each command as SHELL -c COMMAND")
        ->type_name("SHELL")
        ->group(k_jobs_group)
        ->capture_default_str()
        ->envname("GPUSCHED_SHELL");
    app.add_option("--kill-after", options.kill_after_seconds,
                   "How long jobs get between SIGINT/SIGTERM passed on to them and SIGKILL "
                   "(30s, 2m, ...; 0: at once)")
        ->transform(duration_check(true))
        ->type_name("DURATION")
        ->group(k_jobs_group)
        ->capture_default_str()
        ->envname("GPUSCHED_KILL_AFTER");
    app.add_option("--probe-timeout", options.probe_timeout_seconds,
                   "How long to wait for the CUDA probe that counts the GPUs")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->group(k_gpus_group)
        ->capture_default_str()
        ->envname("GPUSCHED_PROBE_TIMEOUT");
    app.add_option("--jobs-per-gpu", options.jobs_per_gpu,
                   "Run up to K jobs at once on each GPU; the least loaded GPU gets the next job")
        ->transform(whole_number_check(1, k_most_jobs_per_gpu))
        ->each([&options](const std::string&) { options.jobs_per_gpu_given = true; })
        ->type_name("K")
        ->group(k_gpus_group)
        ->capture_default_str()
        ->envname("GPUSCHED_JOBS_PER_GPU");
    app.add_option("--gpus-per-job", options.gpus_per_job,
                   "Give each job N distinct GPUs (CUDA_VISIBLE_DEVICES=a,b); jobs still start in "
                   "input order")
        ->transform(whole_number_check(1, k_most_gpus_per_job))
        ->type_name("N")
        ->group(k_gpus_group)
        ->capture_default_str()
        ->envname("GPUSCHED_GPUS_PER_JOB");
    app.add_option("--mem", options.memory,
                   "Each job needs SIZE of GPU memory (20G, 8000M; auto: what earlier jobs of its "
                   "kind used): a GPU takes jobs while their needs fit in its free memory, "
                   "several at once (a queued job may ask its own)")
        ->transform(memory_check())
        ->type_name("SIZE")
        ->group(k_gpus_group)
        ->envname("GPUSCHED_MEM");
    app.add_flag("--uuid", options.uuid,
                 "Give jobs GPU UUIDs instead of indices (GPU indices in --gpus are mapped too)")
        ->envname("GPUSCHED_UUID")
        ->group(k_gpus_group);
    auto* skip_busy =
        app.add_flag(
               "--skip-busy", options.skip_busy,
               "Give no job to a GPU that runs compute processes gpusched did not start (read with "
               "NVML, loaded at run time)")
            ->envname("GPUSCHED_SKIP_BUSY")
            ->group(k_gpus_group);
    app.add_option("--max-used-mib", options.max_used_mib,
                   "With --skip-busy: also skip a GPU with more than M MiB of memory in use")
        ->transform(whole_number_check(0, k_most_mib))
        ->type_name("M")
        ->group(k_gpus_group)
        ->needs(skip_busy)
        ->envname("GPUSCHED_MAX_USED_MIB");
    app.add_option("--recheck", options.recheck_seconds,
                   "How long between looks at skipped GPUs, taken only while jobs wait")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->group(k_gpus_group)
        ->capture_default_str()
        ->envname("GPUSCHED_RECHECK");
    auto* quiet = app.add_flag("-q,--quiet", options.quiet, "Log only errors, not each job")
                      ->group(k_log_group);
    app.add_flag("-v,--verbose", options.verbose, "Log debugging detail")
        ->excludes(quiet)
        ->group(k_log_group);

    auto* joblog = app.add_option("--joblog", options.joblog,
                                  "Append one tab-separated line per finished attempt to FILE, in "
                                  "GNU parallel's columns, the GPU in Host")
                       ->type_name("FILE")
                       ->group(k_records_group);
    if (!for_worker) {
        auto* resume = app.add_flag("--resume", options.resume,
                                    "Skip the jobs the --joblog records as ended, found by their "
                                    "command wherever it stands in the input")
                           ->needs(joblog)
                           ->group(k_records_group);
        app.add_flag("--resume-failed", options.resume_failed,
                     "Skip the jobs the --joblog records as succeeded, found by their "
                     "command; run failed and interrupted ones again")
            ->needs(joblog)
            ->excludes(resume)
            ->group(k_records_group);
    }
    app.add_option("--retries", options.retries,
                   "Try a failed job up to N more times, on another GPU when one is free")
        ->transform(whole_number_check(0, k_most_retries))
        ->type_name("N")
        ->group(k_jobs_group)
        ->capture_default_str()
        ->envname("GPUSCHED_RETRIES");
    app.add_option("--halt", options.halt,
                   "When to stop early: never, or soon|now,fail|success|done=N or =P% "
                   "(soon: start no more jobs; now: also stop running ones)")
        ->type_name("WHEN,WHY=LIMIT")
        ->group(k_jobs_group)
        ->capture_default_str();
    app.add_option("--timeout", options.timeout_seconds,
                   "How long a job may run (90m, 2h, 1d, or seconds) before its process group "
                   "gets SIGTERM (then SIGKILL after --kill-after); it counts as failed")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->group(k_jobs_group)
        ->envname("GPUSCHED_TIMEOUT");
    app.add_option("--nice", options.nice,
                   "Run each job at niceness N more than gpusched's, as nice -n N: 19 is the "
                   "kindest to the machine's other work; below 0 needs root")
        ->transform(integer_check(k_least_nice, k_most_nice))
        ->type_name("N")
        ->group(k_jobs_group)
        ->envname("GPUSCHED_NICE");
    auto* output_dir = app.add_option("--output-dir", options.output_dir,
                                      "Write each job's stdout and stderr to DIR/SEQ.out and "
                                      "DIR/SEQ.err, with DIR/SEQ.info")
                           ->type_name("DIR")
                           ->group(k_jobs_group);
    app.add_flag("--tag", options.tag, "Prefix each output line with the job id and GPU")
        ->excludes(output_dir)
        ->group(k_jobs_group);
    if (!for_worker) {
        app.add_flag("--dry-run", options.dry_run,
                     "Print which job would run on which GPU; run nothing")
            ->group(k_jobs_group);
    }
    auto* progress = app.add_flag("--progress", options.progress,
                                  "Keep a status line at the bottom of stderr even when it is "
                                  "not a terminal")
                         ->group(k_log_group);
    app.add_flag("--no-progress", options.no_progress, "Never draw the status line")
        ->excludes(progress)
        ->group(k_log_group);
    add_lock_dir_option(app, options.lock_dir)->group(k_leases_group);
    app.add_flag("--no-lock", options.no_lock,
                 "Take no host-wide leases: other gpusched instances may use the same GPUs")
        ->group(k_leases_group);
    app.add_option("--share", options.share,
                   "This run's weight when runs want the same GPUs: at each job boundary a "
                   "GPU someone waits for goes to whoever has had less GPU time for its weight "
                   "(default 1; 2 gets twice the time of 1)")
        ->check(weight_check())
        ->type_name("WEIGHT")
        ->group(k_leases_group);
}

namespace {

// A job cannot take more GPUs than the pool has, and CUDA shows a process one MIG
// instance at most, so a job of several GPUs cannot be made of MIG instances.
void check_gpus_per_job(const RunOptions& options, const std::vector<std::string>& gpu_ids)
{
    if (options.gpus_per_job > gpu_ids.size()) {
        throw UsageError(fmt::format("--gpus-per-job {} is more than the {} in the pool ({})",
                                     options.gpus_per_job, counted(gpu_ids.size(), "GPU"),
                                     fmt::join(gpu_ids, ",")));
    }
    const auto mig = std::find_if(gpu_ids.begin(), gpu_ids.end(),
                                  [](const auto& id) { return id.rfind("MIG-", 0) == 0; });
    if (options.gpus_per_job > 1 && mig != gpu_ids.end()) {
        throw UsageError(fmt::format("--gpus-per-job {} with MIG instance {}: a CUDA process sees "
                                     "one MIG instance at most",
                                     options.gpus_per_job, *mig));
    }
}

SchedulerOptions scheduler_options(const RunOptions& options, std::size_t gpus)
{
    SchedulerOptions scheduler;
    scheduler.read_ahead = std::max(k_min_read_ahead, 2 * gpus * options.jobs_per_gpu);
    scheduler.retries = options.retries;
    scheduler.gpus_per_job = options.gpus_per_job;
    scheduler.memory = options.memory;
    scheduler.halt = value_or_usage_error(HaltPolicy::parse(options.halt));
    return scheduler;
}

sys::RunnerOptions runner_options(const RunOptions& options)
{
    sys::RunnerOptions runner;
    runner.kill_after = to_milliseconds(options.kill_after_seconds);
    runner.nice = options.nice;
    if (options.timeout_seconds) {
        runner.timeout = to_milliseconds(*options.timeout_seconds);
    }
    if (options.output_dir) {
        runner.output_files.emplace(*options.output_dir, options.output_info
                                                             ? sys::OutputFiles::Info::written
                                                             : sys::OutputFiles::Info::left_out);
    }
    runner.tag = options.tag;
    // Looked at only while an answer could change where a job goes: with --skip-busy, or
    // while a job that asks for memory (its own or --mem) runs or waits.
    runner.usage_probe = sys::usage_probe_command(to_milliseconds(options.probe_timeout_seconds));
    if (options.skip_busy) {
        runner.busy_rule = BusyRule{options.max_used_mib};
        runner.recheck = to_milliseconds(options.recheck_seconds);
    }
    if (options.joblog && !options.dry_run) {
        runner.joblog.emplace(*options.joblog);
    }
    const bool on_terminal = isatty(STDERR_FILENO) != 0;
    if (options.progress || (on_terminal && !options.no_progress && !options.quiet)) {
        runner.progress = std::make_shared<sys::ProgressLine>(STDERR_FILENO);
        sys::log_around_progress_line(runner.progress);
    }
    return runner;
}

} // namespace

int run_scheduler(RunOptions options)
{
    move_inputs_out_of_gpus(options);
    return run_jobs(options, [&options] {
        RunInput input;
        input.source = std::make_unique<sys::InputReader>(options.inputs, options.fifo);
        return input;
    });
}

int run_jobs(RunOptions& options, const InputFactory& make_input,
             const std::function<void(const std::vector<std::string>&)>& on_gpus)
{
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    } else if (options.verbose) {
        spdlog::set_level(spdlog::level::debug);
    }
    check_shell(options.shell);
    check_gpu_ids(options.gpus, gpu_ids_source(options.gpus));

    // Children must be reapable even if our parent set SIGCHLD to SIG_IGN; then block the
    // signals we handle, before anything else can start a thread: stops, Ctrl-Z and `fg`
    // (SIGTSTP, SIGCONT), and a resized terminal (SIGWINCH) for the status line.
    std::signal(SIGCHLD, SIG_DFL);
    sys::SignalChannel signals{SIGCHLD, SIGINT,  SIGTERM, SIGHUP,
                               SIGUSR1, SIGTSTP, SIGCONT, SIGWINCH};

    sys::CudaProbeChild probe(to_milliseconds(options.probe_timeout_seconds), signals);
    auto gpu_ids = value_or_usage_error(resolve_gpu_ids(
        options.gpus, environment_variable("CUDA_VISIBLE_DEVICES"), probe, options.uuid));
    check_gpus_per_job(options, gpu_ids);
    if (const auto nice = sys::check_niceness(options.nice); !nice) {
        throw UsageError(fmt::format("--nice {}: {}", options.nice, nice.message()));
    }
    auto scheduler_settings = scheduler_options(options, gpu_ids.size());
    scheduler_settings.only_when_free = options.only_when_free;
    std::unique_ptr<sys::HostLeases> leases;
    if (!options.no_lock && !options.dry_run) {
        leases = open_host_leases(options.lock_dir, gpu_ids, probe);
    }
    // The input is opened once the CUDA probe is done: a stop while it runs ends gpusched at
    // once, and has then taken no command from a pipe or FIFO that it could neither run nor
    // name. A FIFO is made and opened only then.
    auto input = make_input();
    auto& source = *input.source;
    if (on_gpus) {
        on_gpus(gpu_ids);
    }
    spdlog::debug("GPUs: {}; shell {}; reading up to {} ahead", fmt::join(gpu_ids, ", "),
                  options.shell, counted(scheduler_settings.read_ahead, "command"));
    Placement placement(GpuPool(std::move(gpu_ids), options.jobs_per_gpu));
    placement.set_jobs_per_gpu_given(options.jobs_per_gpu_given);
    Scheduler scheduler(std::move(placement), std::move(scheduler_settings));
    auto runner_settings = runner_options(options);
    if (leases) {
        leases->set_share(options.share);
    }
    runner_settings.leases = std::move(leases);
    // A run reads the log for --resume only once it holds it, so that no job of an earlier
    // run still runs (a queue worker shares its log with others and reads none).
    if (runner_settings.joblog && !options.only_when_free) {
        if (const auto signal = runner_settings.joblog->lock(signals)) {
            return exit_status_for_signal(*signal);
        }
    }
    // --mem auto starts from the peaks the log recorded: a sweep run again, or resumed,
    // starts packed.
    const bool learns_from_log = options.joblog && options.memory == k_learned_memory;
    if (options.resume || options.resume_failed) {
        runner_settings.resume.emplace(options.resume ? ResumeMode::resume
                                                      : ResumeMode::resume_failed);
    }
    if (runner_settings.resume || learns_from_log) {
        sys::read_joblog(*options.joblog, [&](const JoblogRecord& record) {
            if (runner_settings.resume) {
                runner_settings.resume->add(record);
            }
            if (learns_from_log && record.peak_memory > 0) {
                scheduler.learn_memory_peak(record.command, record.peak_memory);
            }
        });
    }
    if (runner_settings.resume) {
        spdlog::debug("the job log records {}",
                      counted(runner_settings.resume->recorded_jobs(), "job"));
    }
    if (options.dry_run) {
        return sys::dry_run(scheduler, dynamic_cast<sys::InputReader&>(source),
                            runner_settings.resume);
    }

    const auto run_token = sys::RunGuard::make_run_token();
    const JobEnvironment environment(environ, run_token);
    std::vector<int> guard_keeps;
    if (runner_settings.joblog) {
        guard_keeps.push_back(runner_settings.joblog->fd());
    }
    for (const int fd : source.held_while_jobs_run()) {
        guard_keeps.push_back(fd);
    }
    // Fds 0-2, then what a job gets: a lease per GPU (two for a MIG instance: its own and its
    // share of its GPU), the marker (from here), its presence token and a long command's script.
    const int lowest_marker_fd = static_cast<int>(3 + 2 * scheduler.pool().size() + 2);
    const sys::RunGuard guard(runner_settings.kill_after, guard_keeps, lowest_marker_fd, run_token);
    const sys::JobSpawner spawner(options.shell, guard.marker_fd());
    sys::SystemProcessTable processes(spawner);
    LocalLauncher launcher(processes);
    sys::RunnerRequests no_requests;
    sys::JobEndSink no_ends;
    sys::JobRunner runner(scheduler, source, input.requests ? *input.requests : no_requests,
                          input.ends ? *input.ends : no_ends,
                          {processes, launcher, signals, system_time()}, environment,
                          std::move(runner_settings));
    return runner.run();
}

} // namespace gpusched::cli
