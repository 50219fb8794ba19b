#include "complete_jobs_command.hpp"

#include "job_commands.hpp"
#include "open_queue.hpp"
#include "submit_command.hpp"

#include <gpusched/counted.hpp>
#include <gpusched/queue/jobs_wanted.hpp>
#include <gpusched/sys/default_signals.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/visible_text.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <optional>
#include <set>

namespace gpusched::cli {
namespace {

using namespace std::chrono_literals;
using queue::JobState;

// A keystroke's worth of waiting: for each exchange with Redis, and for the whole command
// whatever it waits for (a host name being looked up is bounded by nothing else).
constexpr auto k_redis_timeout = 250ms;
constexpr unsigned k_seconds_at_most = 1;
// As many jobs as a person reads through in a list; typing the beginning of an id finds the
// older ones.
constexpr std::size_t k_most_offered = 100;
// How much of a job's command its description shows.
constexpr std::size_t k_command_shown = 50;

// The jobs each command acts on: the states it takes, and whether only the user's own (cancel
// and retry refuse another user's jobs, root's aside).
struct Offer {
    std::string_view command;
    std::vector<JobState> states; // none: every state
    bool own_only = false;
};

const std::vector<Offer>& offers()
{
    static const std::vector<Offer> k_offers = {
        {"cancel", {JobState::queued, JobState::waiting, JobState::running}, true},
        {"wait", {JobState::queued, JobState::waiting, JobState::running}, false},
        {"retry",
         {JobState::failed, JobState::cancelled, JobState::refused, JobState::skipped},
         true},
        {"logs", {}, false},
        {"submit", {}, false}, // --after and --after-ok: any job, ended or not
    };
    return k_offers;
}

// What the command line names before the word being completed, read by the command's own
// parser (its options, their variables, --db excluding --redis): the queue, and the jobs
// already given. Nothing when the words do not parse.
struct Line {
    QueueOptions queue;
    std::vector<std::string> jobs;
};

std::optional<Line> line_of(std::string_view command, std::vector<std::string> words)
{
    CLI::App app;
    JobCommandOptions job_options;
    add_job_commands(app, job_options);
    SubmitOptions submit_options;
    add_submit_command(app, submit_options);
    try {
        auto* parser = app.get_subcommand(std::string(command));
        // What is still to be typed is not missing, and what the parser does not know is not
        // ours to refuse.
        parser->allow_extras();
        for (auto* option : parser->get_options()) {
            option->required(false);
        }
        // An option last, without its value: the word being completed is that value (--after).
        if (!words.empty() && words.back().starts_with("-")) {
            words.pop_back();
        }
        // As the shell expands it once the line is run.
        const char* home = std::getenv("HOME");
        for (auto& word : words) {
            if (word.starts_with("~/") && home != nullptr) {
                word = home + word.substr(1);
            }
        }
        words.insert(words.begin(), std::string(command));
        std::reverse(words.begin(), words.end()); // CLI11 takes them last first
        app.parse(words);
    } catch (const CLI::Error&) {
        return std::nullopt;
    }
    if (command == "submit") {
        auto after = submit_options.after;
        after.insert(after.end(), submit_options.after_ok.begin(), submit_options.after_ok.end());
        return Line{submit_options.queue, std::move(after)};
    }
    return Line{job_options.queue, job_options.ids};
}

// The word being completed: the jobs of a list given before its last comma (3,5-7,1), and the
// beginning of the one being typed; without the option of `--after=1` (a shell that does not
// split it there passes it whole).
struct Typed {
    std::string list;
    std::string job;
};

Typed typed_of(std::string_view word)
{
    if (const auto equals = word.find('='); word.starts_with("-") && equals != word.npos) {
        word.remove_prefix(equals + 1);
    }
    const auto comma = word.rfind(',');
    if (comma == word.npos) {
        return {"", std::string(word)};
    }
    return {std::string(word.substr(0, comma + 1)), std::string(word.substr(comma + 1))};
}

// Each id and label of the jobs already named (3,5-7 sweep), to be offered no more.
std::set<std::string> words_named_in(const std::vector<std::string>& words)
{
    std::set<std::string> named;
    for (const auto& word : words) {
        std::string_view rest = word;
        for (auto comma = rest.find(','); !rest.empty(); comma = rest.find(',')) {
            named.insert(std::string(rest.substr(0, comma)));
            rest = comma == rest.npos ? std::string_view() : rest.substr(comma + 1);
        }
    }
    return named;
}

// "sweep: python train.py --lr 0.1 (running)": its label, the beginning of its command (cut
// between characters), its state; shown as the terminal would show it, on one line.
std::string description_of(const queue::JobRecord& job)
{
    std::string command = job.command;
    if (command.size() > k_command_shown) {
        auto cut = k_command_shown;
        while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xc0) == 0x80) {
            --cut; // inside a UTF-8 character
        }
        command = command.substr(0, cut) + "...";
    }
    const auto state = to_string(job.state);
    return job.name.empty()
               ? fmt::format("{} ({})", visible_text(command), state)
               : fmt::format("{}: {} ({})", visible_text(job.name), visible_text(command), state);
}

// The candidates, one a line: the jobs as read (newest first), then the labels among them,
// each as the user would type it (LABEL for their own jobs and those of nobody in particular,
// USER/LABEL for another's).
std::string candidates(const std::vector<queue::JobRecord>& jobs, const Typed& typed,
                       const std::set<std::string>& named, const std::string& user)
{
    std::string lines;
    const auto offer = [&](const std::string& word, const std::string& description) {
        if (!named.contains(word) && word.starts_with(typed.job)) {
            lines += fmt::format("{}{}\t{}\n", typed.list, word, description);
        }
    };
    struct Labelled {
        std::string label;
        std::int64_t newest = 0;
        std::size_t jobs = 0;
    };
    std::vector<Labelled> labels;
    for (const auto& job : jobs) {
        offer(std::to_string(job.id), description_of(job));
        if (job.name.empty()) {
            continue;
        }
        const auto& submitter = job.submitter.user;
        const bool own = submitter.empty() || submitter == user;
        const auto label = own ? job.name : submitter + "/" + job.name;
        // Only what the commands take as a label: a Redis server's fields are anyone's to
        // write, and a tab or a newline in one would make a candidate of its own.
        if (own ? !is_job_name(label) : !is_label_of_a_user(label)) {
            continue;
        }
        auto found = std::find_if(labels.begin(), labels.end(),
                                  [&](const Labelled& each) { return each.label == label; });
        if (found == labels.end()) {
            found = labels.insert(labels.end(), {label, job.id, 0});
        }
        ++found->jobs;
    }
    // Counted among the jobs read: where as many were read as are offered, there may be more.
    // Each names its newest job, so that no two read the same (zsh lists the matches of one
    // description together).
    const bool cut = jobs.size() >= k_most_offered;
    for (const auto& [label, newest, count] : labels) {
        offer(label, count == 1 && !cut
                         ? fmt::format("label of job {}", newest)
                         : fmt::format("label of {}{}, the newest {}", cut ? "at least " : "",
                                       counted(count, "job"), newest));
    }
    return lines;
}

std::string complete_jobs(const std::vector<std::string>& args)
{
    if (args.size() < 2) {
        return {};
    }
    const auto& command = args[0];
    const auto offer = std::find_if(offers().begin(), offers().end(),
                                    [&](const Offer& each) { return each.command == command; });
    if (offer == offers().end()) {
        return {};
    }
    const auto line = line_of(command, {args.begin() + 2, args.end()});
    if (!line || (command == "logs" && !line->jobs.empty())) {
        return {}; // logs shows one job
    }
    const auto typed = typed_of(args[1]);
    const auto user = sys::user_name(getuid());
    queue::JobsWanted wanted;
    wanted.states = offer->states;
    wanted.prefix = typed.job;
    if (offer->own_only && getuid() != 0) {
        wanted.user = user;
    }
    wanted.most = k_most_offered;
    const auto queue = open_queue_to_read(line->queue, k_redis_timeout);
    if (!queue) {
        return {};
    }
    auto named = words_named_in(line->jobs);
    const auto listed = words_named_in({typed.list});
    named.insert(listed.begin(), listed.end());
    return candidates(queue->newest(wanted), typed, named, user);
}

} // namespace

int run_complete_jobs(const std::vector<std::string>& args)
{
    sys::end_after(k_seconds_at_most);
    // The user's shell shows whatever reaches its stderr: a warning about a database (its
    // permissions, say) belongs to the queue's commands, not to a completion.
    spdlog::set_level(spdlog::level::off);
    try {
        fmt::print("{}", complete_jobs(args));
    } catch (const std::exception&) {
        // No queue to read (another user's database, a server away, a name refused): nothing
        // to offer.
    }
    return 0;
}

} // namespace gpusched::cli
