#include "worker_command.hpp"

#include "command_line_errors.hpp"
#include "open_queue.hpp"
#include "option_values.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/queue/host_name.hpp>
#include <gpusched/queue/queue_worker.hpp>
#include <gpusched/queue/redis/redis_worker_store.hpp>
#include <gpusched/queue/redis/result_spool.hpp>
#include <gpusched/queue/sqlite/database_ownership.hpp>
#include <gpusched/queue/sqlite/sqlite_worker_store.hpp>
#include <gpusched/sys/output_files.hpp>
#include <gpusched/sys/state_directory.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace gpusched::cli {

CLI::App* add_worker_command(CLI::App& app, WorkerOptions& options)
{
    auto* worker = app.add_subcommand(
        "worker", "Run jobs from a queue (local, or Redis with --redis) on this machine's GPUs, "
                  "as a run would");
    add_queue_options(*worker, options.queue, true);
    worker
        ->add_option("--lease-timeout", options.lease_timeout_seconds,
                     "How long without a heartbeat before a worker's jobs go back to the "
                     "queue (heartbeats come three times as often)")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str()
        ->envname("GPUSCHED_LEASE_TIMEOUT");
    worker
        ->add_option("--spool", options.spool,
                     "Directory for results not yet acknowledged by Redis, sent by the next "
                     "worker on the queue if this one ends first (default: "
                     "$XDG_STATE_HOME/gpusched/spool, else ~/.local/state/gpusched/spool)")
        ->type_name("DIR")
        ->envname("GPUSCHED_SPOOL");
    worker
        ->add_option_function<std::vector<std::string>>(
            "--stop",
            [&options](const std::vector<std::string>& ids) {
                options.stop = true;
                // `--stop` alone comes as one empty value.
                for (const auto& id : ids) {
                    if (!id.empty()) {
                        options.stop_ids.push_back(id);
                    }
                }
            },
            "Run no worker: ask the queue's workers (those named by the ids `gpusched workers` "
            "lists, else every one of yours) to finish their running jobs and start none, "
            "then exit; with --now, to stop at once as SIGTERM does (their running jobs go "
            "back to the queue)")
        ->expected(0, -1)
        ->type_name("[ID...]");
    worker->add_flag("--now", options.now, "With --stop: stop the workers' running jobs too");
    worker->add_flag("--update", options.update,
                     "Take over from the workers of yours that serve the queue on this host "
                     "(to change their GPUs or options): they finish their running jobs and "
                     "start none, and this worker starts the next ones; no job is lost or run "
                     "twice, and a GPU still busy with one of theirs gets a job of this worker "
                     "once its job ends");
    add_run_options(*worker, options.run, true);
    return worker;
}

namespace {

constexpr int k_kept_heap_bytes = 8 << 20;

// The mode of a directory readable by those who may read `file`: 0700, with r-x for the group
// and others where the file has r.
mode_t readable_as(const std::filesystem::path& file)
{
    struct stat status {};
    const mode_t read = ::stat(file.c_str(), &status) == 0 ? status.st_mode & 044 : 0;
    return 0700 | read | (read >> 2);
}

// Each job's output goes to files, for `gpusched logs`: --output-dir, else a directory beside
// the database (so that who may read the queue may read its jobs' output).
std::string local_output_directory(const std::filesystem::path& database, WorkerOptions& options)
{
    if (options.run.tag) {
        return ""; // the output is tagged into the worker's own
    }
    if (!options.run.output_dir) {
        const auto directory = std::filesystem::path(database.string() + "-output") /
                               options.queue.queue;
        // Beside the database, in a directory no other user can write (submit and worker
        // refuse one they can), and that those may read who may read the database: nobody
        // but its owner, unless they shared it (chmod).
        sys::make_own_directory(std::filesystem::absolute(database).parent_path(), directory,
                                readable_as(database));
        options.run.output_dir = directory.string();
        options.run.output_info = false; // the queue's records say what a .info file would
    }
    return std::filesystem::absolute(*options.run.output_dir).string();
}

// A Redis worker's own place for its jobs' output, which it removes once sent: one directory
// per worker process, so workers of queues of the same name on other servers never meet.
std::filesystem::path redis_output_directory(const std::string& queue)
{
    // Without a state directory, a place in the temporary directory, whose name another
    // user could take first: made and checked ours.
    const auto state = sys::state_directory();
    const auto trusted = state ? *state : sys::temporary_directory();
    const auto directory =
        (state ? *state / "output" : trusted / fmt::format("gpusched-output-{}", getuid())) /
        queue / fmt::format("worker-{}", getpid());
    sys::make_own_directory(trusted, directory);
    return directory;
}

// True when `worker` is the caller's (or not said: recorded before workers had a user).
bool is_ours(const queue::WorkerRecord& worker)
{
    return worker.user.empty() || worker.user == sys::user_name(getuid());
}

// `worker --update`: the other workers of ours on this host drain, once this one is known
// able to run (its options read, its GPUs found, its queue open).
void take_over_workers(const WorkerOptions& options, const std::string& self)
{
    const auto queue = open_queue(options.queue);
    const auto host = queue::this_host();
    for (const auto& worker : queue->list({}).workers) {
        if (worker.id == self || worker.host != host || !is_ours(worker)) {
            continue;
        }
        if (queue->ask_worker_to_stop(worker.id, false)) {
            spdlog::info("worker {} (pid {}, GPUs {}) finishes its running jobs and starts none: "
                         "this worker takes over",
                         worker.id, worker.pid, worker.gpus.empty() ? "-" : worker.gpus);
        }
    }
}

// Runs the jobs of the store `make_store` makes, as a run would, on the GPUs of the run.
template <class MakeStore>
int run_queue_worker(WorkerOptions& options, MakeStore make_store)
{
    queue::QueueWorker* worker = nullptr;
    return run_jobs(
        options.run,
        [&] {
            auto made = std::make_unique<queue::QueueWorker>(make_store(), queue::this_host());
            worker = made.get();
            RunInput input;
            input.requests = worker;
            input.ends = worker;
            input.source = std::move(made);
            return input;
        },
        [&](const std::vector<std::string>& ids) {
            if (options.update) {
                take_over_workers(options, worker->worker_id());
            }
            worker->set_gpus(fmt::format("{}", fmt::join(ids, ",")));
        });
}

// `worker --stop`: each worker asked, through its queue, wherever it runs. Root may stop any.
int stop_workers(const WorkerOptions& options)
{
    const auto queue = open_queue(options.queue);
    const auto workers = queue->list({}).workers;
    const auto may_stop = [](const auto& worker) { return getuid() == 0 || is_ours(worker); };
    std::vector<std::string> ids = options.stop_ids;
    std::size_t refused = 0;
    if (ids.empty()) {
        for (const auto& worker : workers) {
            if (may_stop(worker)) {
                ids.push_back(worker.id);
            }
        }
        if (ids.empty()) {
            fmt::print("{}: no worker of yours to stop\n", queue->describe());
            return k_exit_success;
        }
    }
    for (const auto& id : ids) {
        const auto found = std::find_if(workers.begin(), workers.end(),
                                        [&id](const auto& worker) { return worker.id == id; });
        if (found != workers.end() && !may_stop(*found)) {
            fmt::print(stderr, "{}: worker {} is {}'s: not yours to stop\n", program_name(),
                       visible_text(id), visible_text(found->user));
            ++refused;
            continue;
        }
        if (found == workers.end() || !queue->ask_worker_to_stop(id, options.now)) {
            fmt::print(stderr, "{}: no worker {} in {}\n", program_name(), id, queue->describe());
            ++refused;
            continue;
        }
        fmt::print("worker {}{} asked to stop{}\n", visible_text(id),
                   found->host.empty()
                       ? ""
                       : fmt::format(" (on {}, pid {})", visible_text(found->host), found->pid),
                   options.now ? " now: its running jobs go back to the queue"
                               : ": it finishes its running jobs and starts none");
    }
    return exit_status_for_failures(refused);
}

int run_local_worker(WorkerOptions& options)
{
    // Where the database really is, the way there checked before anything is made beside it.
    const auto database = queue::trusted_database_location(local_database_of(options.queue));
    queue::SqliteWorkerSettings settings{database, options.queue.queue, queue::this_host(), "",
                                        local_output_directory(database, options)};
    options.run.only_when_free = true;
    // SQLite allocates and frees a scratch buffer of several pages at each job's take (the
    // rebalancing of an index); past glibc's default threshold the heap's top would go back
    // to the system after each and be taken again at the next: two system calls and a TLB
    // flush per job, on a worker that starts jobs as fast as processes can be made.
    mallopt(M_TRIM_THRESHOLD, k_kept_heap_bytes);
    return run_queue_worker(options, [&] {
        return std::make_unique<queue::SqliteWorkerStore>(settings);
    });
}

} // namespace

int run_worker(WorkerOptions options)
{
    if (options.now && !options.stop) {
        throw UsageError("--now goes with --stop: gpusched worker --stop --now");
    }
    if (options.stop) {
        return stop_workers(options);
    }
    if (options.queue.is_local()) {
        return run_local_worker(options);
    }
    queue::RedisWorkerSettings settings;
    settings.url = redis_url_of(options.queue);
    settings.queue = options.queue.queue;
    settings.key = read_key(options.queue);
    settings.lease_timeout = to_milliseconds(options.lease_timeout_seconds);
    settings.host = queue::this_host();
    settings.spool_directory =
        options.spool.empty() ? queue::ResultSpool::default_directory()
                              : std::filesystem::path(options.spool);
    if (!options.run.tag) {
        // Each job's output goes to files, whose ends go with its result for `gpusched logs`.
        if (!options.run.output_dir) {
            options.run.output_dir = redis_output_directory(options.queue.queue).string();
            options.run.output_info = false; // the result says what a .info file would
            settings.output_directory_is_ours = true;
        }
        settings.output_directory = std::filesystem::absolute(*options.run.output_dir);
    }
    options.run.only_when_free = true;
    if (options.run.kill_after_seconds >= options.lease_timeout_seconds) {
        // A killed worker's jobs get SIGKILL only --kill-after after their SIGTERM: by then
        // another worker may have started them again.
        spdlog::warn("--kill-after ({} s) is not below --lease-timeout ({} s): a job of this "
                     "worker that ignores SIGTERM may still run when its lease runs out and "
                     "another worker starts it",
                     options.run.kill_after_seconds, options.lease_timeout_seconds);
    }
    return run_queue_worker(options, [&] {
        return std::make_unique<queue::RedisWorkerStore>(settings);
    });
}

} // namespace gpusched::cli
