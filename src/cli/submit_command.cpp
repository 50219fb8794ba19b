#include "submit_command.hpp"

#include "command_line_errors.hpp"
#include "input_chunks.hpp"
#include "job_commands.hpp"
#include "job_end_report.hpp"
#include "open_queue.hpp"
#include "option_values.hpp"
#include "worker_autostart.hpp"

#include <gpusched/carried_environment.hpp>
#include <gpusched/json_output.hpp>
#include <gpusched/queue/submitted_gpus.hpp>
#include <gpusched/command_template.hpp>
#include <gpusched/counted.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/queue/host_name.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/process_context.hpp>
#include <gpusched/sys/user_account.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <cstdio>
#include <optional>

namespace gpusched::cli {
namespace {

// "12", "12-19", "3,5-7": the ids queued, for a script to capture.
std::string id_ranges(const std::vector<std::int64_t>& ids)
{
    std::string text;
    for (std::size_t first = 0; first < ids.size();) {
        auto last = first;
        while (last + 1 < ids.size() && ids[last + 1] == ids[last] + 1) {
            ++last;
        }
        text += fmt::format("{}{}", text.empty() ? "" : ",", ids[first]);
        if (last != first) {
            text += fmt::format("-{}", ids[last]);
        }
        first = last + 1;
    }
    return text;
}

void print_ids(const SubmitOptions& options, const std::vector<std::int64_t>& ids)
{
    if (options.json) {
        auto json = json_document("submit");
        json["queue"] = options.queue.queue;
        json["ids"] = ids;
        // One line, so that the submissions of a script can be kept as JSON Lines.
        fmt::print("{}\n", json.dump());
    } else if (!ids.empty()) {
        fmt::print("{}\n", id_ranges(ids));
    }
    std::fflush(stdout); // before a --wait that may last hours
}

// The one command of `submit -- CMD ARGS...`: each word quoted as the shell needs it, so the
// job gets exactly these arguments. A single word is a shell command line as it is (`submit --
// 'for i in 1 2; do echo $i; done'`), as pueue and a command file take it.
std::string command_of(const std::vector<std::string>& words)
{
    if (words.size() == 1) {
        return words.front();
    }
    std::string command;
    for (const auto& word : words) {
        command += (command.empty() ? "" : " ") + shell_quote(word);
    }
    return command;
}

// Queues the commands of `input`, chunk by chunk as they come; how many could not be queued
// (a NUL byte, over 16 MiB), each said.
std::size_t submit_inputs(sys::InputReader& input, queue::Submission& submission)
{
    std::size_t rejected = 0;
    std::uint64_t number = 0;
    while (true) {
        const auto lines = read_chunk(input, submission.chunk_size());
        if (lines.empty()) {
            return rejected;
        }
        std::vector<queue::CommandToQueue> chunk;
        chunk.reserve(lines.size());
        for (const auto& line : lines) {
            ++number;
            if (line.line.fault != LineFault::none) {
                spdlog::error("{}:{}: command {} not submitted: {}", line.source,
                              line.line.first_line, number, describe_fault(line.line.fault));
                ++rejected;
                continue;
            }
            chunk.push_back({line.line.text, number});
        }
        if (!chunk.empty()) {
            submission.add(chunk);
        }
    }
}

// What each job of the submission asks of whichever worker runs it, and its label.
void add_job_options(CLI::App& submit, SubmitOptions& options)
{
    const auto* group = "Each job's own";
    submit
        .add_option("-n,--gpus-per-job", options.gpus_per_job,
                    "Give each job N distinct GPUs, whatever its worker's --gpus-per-job; a "
                    "worker with fewer GPUs leaves it for one that has them")
        ->transform(whole_number_check(1, k_most_gpus_per_job))
        ->type_name("N")
        ->group(group);
    submit
        .add_option("--mem", options.memory,
                    "Each job needs SIZE of GPU memory on each of its GPUs (20G, 8000M; auto: "
                    "what earlier jobs of its kind used): its worker runs it beside other jobs "
                    "while they fit (default: the worker's --mem)")
        ->transform(memory_check())
        ->type_name("SIZE")
        ->group(group);
    submit
        .add_option("--timeout", options.timeout_seconds,
                    "How long each job may run (90m, 2h, 1d, or seconds) before SIGTERM, then "
                    "SIGKILL after the worker's --kill-after; it counts as failed (default: the "
                    "worker's --timeout)")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->group(group);
    submit
        .add_option("--retries", options.retries,
                    "Try a failed job up to N more times (default: the worker's --retries)")
        ->transform(whole_number_check(0, k_most_retries))
        ->type_name("N")
        ->group(group);
    submit
        .add_option("--nice", options.nice,
                    "Run each job as nice -n N under its worker, 19 the kindest to other work "
                    "(default: the worker's --nice)")
        ->transform(integer_check(k_least_nice, k_most_nice))
        ->type_name("N")
        ->group(group);
    submit
        .add_option("--name", options.name,
                    "Label the jobs LABEL: listed with them, and usable in place of their ids "
                    "(gpusched wait LABEL, logs LABEL, cancel LABEL)")
        ->check(CLI::Validator(
            [](const std::string& name) -> std::string {
                if (is_job_name(name)) {
                    return {};
                }
                return fmt::format("'{}' is not a label: a letter, then letters, digits and "
                                   "- _ . : @ +, at most 100",
                                   name);
            },
            ""))
        ->type_name("LABEL")
        ->group(group);
    submit
        .add_option("--after", options.after,
                    "Start the jobs only once these jobs have ended, however they ended (ids, "
                    "ranges or labels: 12, 12-19,25, sweep); until then they are waiting")
        ->allow_extra_args(false)
        ->type_name("IDS")
        ->group(group);
    submit
        .add_option("--after-ok", options.after_ok,
                    "Start the jobs only once these jobs have succeeded; if one ends otherwise, "
                    "the jobs are skipped (recorded as such, never run)")
        ->allow_extra_args(false)
        ->type_name("IDS")
        ->group(group);
}

// The jobs a submission waits for, as the queue knows them: labels looked up there.
std::vector<queue::JobDependency> dependencies_of(const SubmitOptions& options)
{
    std::vector<queue::JobDependency> after;
    if (options.after.empty() && options.after_ok.empty()) {
        return after;
    }
    auto queue = open_queue(options.queue);
    // A job named twice is waited for once: for its success if either asked for it.
    std::map<std::int64_t, bool> needs_success;
    for (const bool ok : {false, true}) {
        for (const auto id : job_ids_of(ok ? options.after_ok : options.after, named_in(*queue))) {
            needs_success[id] = needs_success[id] || ok;
        }
    }
    for (const auto& [id, ok] : needs_success) {
        after.push_back({id, ok});
    }
    return after;
}

// Queues the commands of the inputs, read by the rules of a run (or the one command after
// --), as one batch, chunk by chunk as they come, and prints their ids; with --wait, follows
// them to their end. Whichever store keeps the queue.
int submit(const SubmitOptions& options)
{
    if (!options.command.empty() && !options.inputs.empty()) {
        throw UsageError(fmt::format("submit queues the command after -- or the commands of "
                                     "FILEs ({}), not both",
                                     fmt::join(options.inputs, ", ")));
    }
    queue::SubmissionSettings settings;
    // Each job runs as it was submitted: here, with this environment and umask, as us. What a
    // Redis server keeps, whoever can read the server can read: only what was chosen.
    settings.context = sys::this_process_context();
    settings.gpus_named = queue::gpus_named_by(settings.context.environment);
    const EnvironmentChoice choice{options.env, options.queue.is_local() || options.env_all};
    settings.context.environment = carried_environment(settings.context.environment, choice);
    settings.context.whole_environment = choice.whole;
    auto& asked = settings.context.request;
    asked.gpus = options.gpus_per_job;
    asked.memory = options.memory;
    if (options.timeout_seconds) {
        asked.timeout = to_milliseconds(*options.timeout_seconds);
    }
    asked.retries = options.retries;
    asked.nice = options.nice;
    settings.name = options.name;
    settings.after = dependencies_of(options);
    settings.submitter = {getuid(), sys::user_name(getuid()), queue::this_host()};
    settings.priority = options.priority;
    settings.front = options.front;
    settings.key = read_key(options.queue);
    settings.connect_timeout = to_milliseconds(options.connect_timeout_seconds);
    if (!options.no_start) {
        settings.start_worker = start_worker;
    }
    std::optional<sys::InputReader> input;
    if (options.command.empty()) {
        input.emplace(options.inputs, std::nullopt);
    }
    const auto submission = open_submission(options.queue, std::move(settings));
    std::size_t rejected = 0; // commands that cannot run (a NUL byte, over 16 MiB)
    if (!options.command.empty()) {
        submission->add({{command_of(options.command), 1}});
    } else {
        rejected = submit_inputs(*input, *submission);
    }
    submission->close();
    print_ids(options, submission->ids());
    if (!options.wait) {
        return exit_status_for_failures(rejected);
    }
    const auto failed = rejected + submission->wait([](const queue::EndedJob& job) {
        return report_job_end(job);
    });
    const auto total = submission->size() + rejected;
    spdlog::info("{}: {} succeeded, {} failed", counted(total, "job"), total - failed, failed);
    return exit_status_for_failures(failed);
}

} // namespace

void take_submitted_command(std::vector<std::string>& args, std::vector<std::string>& command)
{
    const auto end = std::find(args.begin(), args.end(), "--");
    if (end == args.end()) {
        return;
    }
    command.assign(end + 1, args.end());
    args.erase(end, args.end());
    if (command.empty()) {
        throw UsageError("submit --: no command after --");
    }
}

CLI::App* add_submit_command(CLI::App& app, SubmitOptions& options)
{
    auto* submit =
        app.add_subcommand("submit", "Queue commands for `gpusched worker`s to run (in a local "
                                     "queue, or in Redis with --redis)");
    add_queue_options(*submit, options.queue, true);
    submit
        ->add_option("FILE", options.inputs,
                     "Command files read in order ('-' is stdin; default: stdin); or, after --, "
                     "one command and its arguments, each word passed as given (-- python train.py "
                     "--name 'a b' passes 'a b' as one argument); a single word after -- is a "
                     "shell command line, run as written (-- 'for i in 1 2; do echo $i; done')")
        ->type_name("");
    submit->add_flag(
        "--wait", options.wait,
        "Follow the jobs to their end, logging each; exit as a run would. It waits as long as "
        "Redis answers; when Redis stays out of reach past --connect-timeout it exits with 75, "
        "naming the jobs whose outcome is unknown, and when the queue was reset (FLUSHALL, "
        "Redis restarted without its data) with 255, naming the jobs lost");
    add_connect_timeout_option(*submit, options.connect_timeout_seconds,
                               "How long to keep trying to reach Redis, at the start and after a "
                               "lost connection (pauses of 0.1 s doubling to 2 s), before giving "
                               "up with exit status 75");
    submit
        ->add_option("--priority", options.priority,
                     "Run before every queued job of a lower priority (negative: after)")
        ->transform(integer_check(-1'000'000, 1'000'000))
        ->type_name("N")
        ->capture_default_str();
    submit->add_flag("--front", options.front,
                     "Put the jobs ahead of the queued ones of their priority, in their order");
    submit
        ->add_flag("--no-start", options.no_start,
                     "Start no worker when none serves the local queue (by default the first "
                     "submit starts one in the background, on the GPUs a run would use)")
        ->envname("GPUSCHED_NO_START");
    submit->add_flag("--json", options.json,
                     "Print the ids queued as JSON ({\"queue\": NAME, \"ids\": [...]}) "
                     "rather than as ranges (12-19)");
    add_job_options(*submit, options);
    submit
        ->add_option("--env", options.env,
                     "Carry this variable of the environment with the jobs: NAME, PREFIX* (every "
                     "variable whose name starts so) or NAME=VALUE (set it); repeatable. A local "
                     "queue keeps the whole environment anyway (its database is yours alone); on "
                     "Redis the jobs carry only what --env names, since whoever can read that "
                     "server can read it, and run in the worker's environment with these over it")
        ->check([](const std::string& entry) { return environment_entry_error(entry); })
        ->allow_extra_args(false)
        ->type_name("NAME");
    submit->add_flag("--env-all", options.env_all,
                     "On Redis, carry the whole environment (API keys and tokens in it "
                     "included): readable by anyone who can read that Redis server");
    submit->add_flag("-q,--quiet", options.quiet, "Log only errors");
    submit->footer("Prints the ids it queued on stdout (12, or 12-19), so that a script can\n"
                   "follow them:\n"
                   "  id=$(gpusched submit -- python train.py --lr 0.1) && gpusched wait $id\n"
                   "  gpusched submit commands.txt\n"
                   "  echo 'python eval.py' | gpusched submit --priority 5\n");
    return submit;
}

int run_submit(const SubmitOptions& options)
{
    if (options.quiet) {
        spdlog::set_level(spdlog::level::err);
    }
    try {
        return submit(options);
    } catch (const queue::QueueUnreachable& error) {
        // Not a fault of the queue: the same submit may work later (sysexits' EX_TEMPFAIL).
        fmt::print(stderr, "{}: error: {}\n", program_name(), error.what());
        return k_exit_temporary_failure;
    }
}

} // namespace gpusched::cli
