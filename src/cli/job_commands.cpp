#include "job_commands.hpp"

#include "command_line_errors.hpp"
#include "open_queue.hpp"
#include "option_values.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/parse_number.hpp>
#include <gpusched/queue/sqlite/database_ownership.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace gpusched::cli {
namespace {

void add_ids(CLI::App& command, JobCommandOptions& options, bool required,
             const char* description)
{
    auto* ids = command.add_option("ID", options.ids, description)->type_name("ID");
    if (required) {
        ids->required();
    }
}

void add_gpu(CLI::App& command, JobCommandOptions& options, const char* description)
{
    command.add_option("--gpu", options.gpu, description)
        ->type_name("ID")
        ->check(CLI::Validator(
            [](const std::string& gpu) {
                const bool blank_or_spaced =
                    gpu.empty() || std::any_of(gpu.begin(), gpu.end(), [](char c) {
                        return std::isspace(static_cast<unsigned char>(c)) != 0 ||
                               std::iscntrl(static_cast<unsigned char>(c)) != 0;
                    });
                return blank_or_spaced ? std::string("a GPU id, as the workers name it, without "
                                                     "spaces (without --gpu: the whole queue)")
                                       : std::string();
            },
            "", "GPU"));
}

// Opens the queue to change it: a local queue of another user is theirs alone.
std::unique_ptr<queue::QueueBackend> open_to_change(const QueueOptions& options)
{
    if (options.is_local()) {
        queue::refuse_others_database(local_database_of(options));
    }
    return open_queue(options);
}

// Why job `job` is not ours to change, if it is not: each acts on their own jobs (root on
// any). A job queued before its submitter was recorded is anyone's who can write the queue.
std::optional<std::string> not_ours(const queue::JobRecord& job)
{
    const auto us = getuid();
    if (us == 0) {
        return std::nullopt;
    }
    const auto& submitter = job.submitter;
    const bool theirs = submitter.uid >= 0 ? submitter.uid != static_cast<std::int64_t>(us)
                                           : !submitter.user.empty() &&
                                                 submitter.user != sys::user_name(us);
    if (!theirs) {
        return std::nullopt;
    }
    return fmt::format("it is {}'s job, and you are {}: each changes only their own jobs (root "
                       "any)",
                       visible_text(submitter.describe()), visible_text(sys::user_name(us)));
}

// Refuses the jobs of `ids` that are someone else's, naming them; the ids left.
std::vector<std::int64_t> own_jobs(queue::QueueBackend& queue, const std::vector<std::int64_t>& ids,
                                   const char* verb, std::size_t& refused)
{
    std::vector<std::int64_t> own;
    std::map<std::int64_t, queue::JobRecord> found;
    for (auto& job : queue.jobs(ids)) {
        found.emplace(job.id, std::move(job));
    }
    for (const auto id : ids) {
        const auto job = found.find(id);
        const auto why = job == found.end() ? std::nullopt : not_ours(job->second);
        if (why) {
            fmt::print(stderr, "{}: job {} not {}: {}\n", program_name(), id, verb, *why);
            ++refused;
        } else {
            own.push_back(id);
        }
    }
    return own;
}


int cancel(const JobCommandOptions& options)
{
    auto queue = open_to_change(options.queue);
    std::size_t refused = 0;
    const auto ids =
        own_jobs(*queue, job_ids_of(options.ids, named_in(*queue)), "cancelled", refused);
    for (const auto id : ids) {
        switch (queue->cancel(id)) {
        case queue::CancelOutcome::removed:
            fmt::print("job {} cancelled: removed from the queue\n", id);
            break;
        case queue::CancelOutcome::stopping:
            fmt::print("job {} cancelled: its worker stops it (SIGTERM, then SIGKILL after "
                       "its --kill-after)\n",
                       id);
            break;
        case queue::CancelOutcome::already_ended: {
            const auto jobs = queue->jobs({id});
            fmt::print(stderr, "{}: job {} not cancelled: it has already ended ({})\n",
                       program_name(), id,
                       jobs.empty() ? "removed" : std::string(to_string(jobs.front().state)));
            ++refused;
            break;
        }
        case queue::CancelOutcome::unknown:
            fmt::print(stderr, "{}: no job {} in {}\n", program_name(), id, queue->describe());
            ++refused;
            break;
        }
    }
    return exit_status_for_failures(refused);
}

int retry(const JobCommandOptions& options)
{
    auto queue = open_to_change(options.queue);
    std::size_t refused = 0;
    const auto ids =
        own_jobs(*queue, job_ids_of(options.ids, named_in(*queue)), "queued again", refused);
    for (const auto id : ids) {
        if (const auto queued = queue->retry(id); !queued) {
            if (queued.kind() != FailureKind::not_found &&
                queued.kind() != FailureKind::bad_request) {
                // Not a refusal of this job but a failure of the store (out of reach, an error
                // reply): the other jobs would not be queued again either.
                throw std::runtime_error(queued.message());
            }
            fmt::print(stderr, "{}: job {} not queued again: {}\n", program_name(), id,
                       queued.message());
            ++refused;
        } else {
            fmt::print("job {} queued again\n", id);
        }
    }
    return exit_status_for_failures(refused);
}

int pause(const JobCommandOptions& options)
{
    auto queue = open_to_change(options.queue);
    queue->pause(options.gpu);
    if (options.gpu.empty()) {
        fmt::print("{} paused: no new job starts; running jobs go on (`gpusched resume` "
                   "undoes it)\n",
                   queue->describe());
    } else {
        fmt::print("GPU {} paused in {}: no new job starts there; running jobs go on\n",
                   options.gpu, queue->describe());
    }
    return k_exit_success;
}

int resume(const JobCommandOptions& options)
{
    auto queue = open_to_change(options.queue);
    queue->resume(options.gpu);
    if (options.gpu.empty()) {
        fmt::print("{} resumed, on every GPU\n", queue->describe());
    } else {
        fmt::print("GPU {} resumed in {}\n", options.gpu, queue->describe());
    }
    return k_exit_success;
}

} // namespace

bool is_job_name(std::string_view word)
{
    constexpr std::size_t k_longest_name = 100;
    return !word.empty() && word.size() <= k_longest_name &&
           std::isalpha(static_cast<unsigned char>(word.front())) != 0 &&
           std::all_of(word.begin(), word.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' ||
                      c == '.' || c == ':' || c == '@' || c == '+';
           });
}

bool is_label_of_a_user(std::string_view word)
{
    const auto slash = word.find('/');
    if (slash == std::string_view::npos || slash == 0) {
        return false;
    }
    const auto user = word.substr(0, slash);
    return std::all_of(user.begin(), user.end(),
                       [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' ||
                                  c == '_' || c == '.' || c == '$';
                       }) &&
           is_job_name(word.substr(slash + 1));
}

std::vector<std::int64_t> ids_labelled(queue::QueueBackend& queue, const std::string& label)
{
    const auto slash = label.find('/');
    const auto user =
        slash == std::string::npos ? sys::user_name(getuid()) : label.substr(0, slash);
    const auto name = slash == std::string::npos ? label : label.substr(slash + 1);
    std::vector<std::int64_t> ids;
    for (const auto& job : queue.jobs(queue.ids_named(name))) {
        // A job queued before submitters were recorded is nobody's in particular.
        if (job.submitter.user == user || job.submitter.user.empty()) {
            ids.push_back(job.id);
        }
    }
    return ids;
}

std::vector<std::int64_t> job_ids_of(const std::vector<std::string>& ids, const JobsNamed& named)
{
    // As submit prints them: 12, 12-19, and lists of those (3,5-7); or a label (--name).
    constexpr std::int64_t k_most_in_a_range = 1'000'000;
    const auto bad = [](const std::string& id) {
        return UsageError(fmt::format("'{}' is not a job id: ids are whole numbers (12), ranges "
                                      "(12-19) or lists of them (3,5-7), as `gpusched queue` "
                                      "lists them and `gpusched submit` prints them, or the "
                                      "label given with submit --name",
                                      id));
    };
    std::vector<std::int64_t> numbers;
    for (const auto& id : ids) {
        std::string_view rest = id;
        do {
            const auto comma = rest.find(',');
            const auto part = rest.substr(0, comma);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            if (comma != std::string_view::npos && rest.empty()) {
                throw bad(id); // "3,": a list that ends in nothing
            }
            if (is_job_name(part) || is_label_of_a_user(part)) {
                const auto labelled = named(std::string(part));
                if (labelled.empty()) {
                    throw NoSuchJob(
                        part.find('/') != std::string_view::npos
                            ? fmt::format("no job labelled '{}'", part)
                            : fmt::format("no job of yours labelled '{}' (another user's jobs "
                                          "labelled so are USER/{})",
                                          part, part));
                }
                numbers.insert(numbers.end(), labelled.begin(), labelled.end());
                continue;
            }
            const auto dash = part.find('-', 1);
            const auto first = parse_number<std::int64_t>(part.substr(0, dash));
            const auto last = dash == std::string_view::npos
                                  ? first
                                  : parse_number<std::int64_t>(part.substr(dash + 1));
            if (!first || !last || *first <= 0 || *last < *first ||
                *last - *first >= k_most_in_a_range) {
                throw bad(id);
            }
            for (auto number = *first; number <= *last; ++number) {
                numbers.push_back(number);
            }
        } while (!rest.empty());
    }
    return numbers;
}

JobCommands add_job_commands(CLI::App& app, JobCommandOptions& options)
{
    JobCommands commands;
    commands.cancel = app.add_subcommand(
        "cancel", "Cancel jobs: a queued one is removed, a running one stopped (SIGTERM); both "
                  "are recorded as cancelled");
    add_ids(*commands.cancel, options, true, "The jobs, by the ids `gpusched queue` lists");

    commands.pause = app.add_subcommand(
        "pause", "Start no new job from the queue (on one GPU with --gpu); running jobs go on");
    add_gpu(*commands.pause, options, "Pause only this GPU, as its workers name it");

    commands.resume =
        app.add_subcommand("resume", "Undo pause (everywhere, or on one GPU with --gpu)");
    add_gpu(*commands.resume, options, "Resume only this GPU");

    commands.retry = app.add_subcommand(
        "retry", "Queue again jobs that failed, were cancelled or were refused");
    add_ids(*commands.retry, options, true, "The jobs, by id");

    commands.logs = app.add_subcommand(
        "logs", "Show what a job wrote: its stdout on stdout, its stderr on stderr");
    add_ids(*commands.logs, options, false,
            "The job, by id or label (default: your latest, named on stderr)");
    commands.logs->add_flag("-f,--follow", options.follow,
                            "Keep showing what it writes until it ends (waiting for it to "
                            "start if it is queued)");
    commands.logs
        ->add_option("-n,--tail", options.tail,
                     "Show only the last N lines of each stream (then, with --follow, what "
                     "comes next)")
        ->transform(whole_number_check(0, 1'000'000'000))
        ->type_name("N");

    commands.wait = app.add_subcommand(
        "wait", "Wait until jobs end; exit as a run would (0, or how many failed), or 124 when "
                "--timeout passed first");
    add_ids(*commands.wait, options, false,
            "The jobs, by id (default: every job queued or running now)");
    commands.wait
        ->add_option("--timeout", options.timeout_seconds,
                     "Give up after this long (30s, 10m, 2h, or seconds), with exit status 124; "
                     "the jobs are left as they are")
        ->transform(duration_check(false))
        ->type_name("DURATION");
    add_connect_timeout_option(*commands.wait, options.connect_timeout_seconds,
                               "How long to keep trying to reach Redis again after it stopped "
                               "answering (a restart, a stall), before giving up with exit "
                               "status 75");

    for (auto* command : {commands.cancel, commands.pause, commands.resume, commands.retry,
                          commands.logs, commands.wait}) {
        // A job queued again must be signed again, for workers that check signatures.
        add_queue_options(*command, options.queue, command == commands.retry);
    }
    return commands;
}

std::optional<int> run_job_command(const JobCommands& commands, const JobCommandOptions& options)
{
    if (*commands.cancel) {
        return cancel(options);
    }
    if (*commands.pause) {
        return pause(options);
    }
    if (*commands.resume) {
        return resume(options);
    }
    if (*commands.retry) {
        return retry(options);
    }
    if (*commands.logs) {
        return run_logs(options);
    }
    if (*commands.wait) {
        return run_wait(options);
    }
    return std::nullopt;
}

} // namespace gpusched::cli
