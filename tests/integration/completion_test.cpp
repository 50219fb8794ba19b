// Shell completions are generated from the command line's definitions: bash completes real
// command lines, and every script offers every option --help lists. Job ids and labels
// complete from the queue the line names, in bash, zsh and fish alike, read only and at once.
#include "harness.hpp"
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>

namespace gpusched::testing {
namespace {

const fs::path k_completions = GPUSCHED_COMPLETIONS_DIR;

// What bash offers for the words of `line` (the last one being completed), through the
// completion function `function` (gpusched's, or simple_hypersearch's).
std::string bash_completes(const std::vector<std::string>& words,
                           std::map<std::string, std::optional<std::string>> env = {},
                           const std::string& function = "_gpusched")
{
    TempDir dir;
    std::string array;
    for (const auto& word : words) {
        array += " '" + word + "'";
    }
    const auto script = "source " + (k_completions / "gpusched.bash").string() + "; COMP_WORDS=(" +
                        array + "); COMP_CWORD=" + std::to_string(words.size() - 1) + "; " +
                        function + "; echo \"${COMPREPLY[*]}\"";
    const auto result = run(dir, {{"-c", script}, {}, {}, std::move(env), "/bin/bash", {}});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result.out;
}

TEST(Completion, BashCompletesCommandsAndTheirOptions)
{
    EXPECT_EQ(bash_completes({"gpusched", "wo"}), "worker workers\n");
    EXPECT_EQ(bash_completes({"gpusched", "exec", "--no"}), "--no-wait\n");
    EXPECT_EQ(bash_completes({"gpusched", "--gpus", "0", "--dry"}), "--dry-run\n");
    EXPECT_EQ(bash_completes({"gpusched", "submit", "--wa"}), "--wait\n");
}

TEST(Completion, BashCompletesTheValuesOfHaltAndSamplingMode)
{
    EXPECT_EQ(bash_completes({"gpusched", "--halt", "now,f"}), "now,fail=1 now,fail=10%\n");
    // bash splits `--halt=so` at the `=`.
    EXPECT_EQ(bash_completes({"gpusched", "--halt", "=", "so"}),
              "soon,fail=1 soon,fail=10% soon,success=1 soon,done=1\n");
    EXPECT_EQ(bash_completes({"gpusched", "hypersearch", "x {a}", "--sampling-mode", "sh"}),
              "shuffled_grid\n");
    EXPECT_EQ(bash_completes({"gpusched", "--timeout", "--dr"}), "--dry-run\n")
        << "an option after an option that takes no listed values";
}

// Every value offered is one the option takes: the lists cannot drift from the parser.
TEST(Completion, EveryValueOfferedIsAccepted)
{
    TempDir dir;
    std::istringstream halts(bash_completes({"gpusched", "--halt", ""}));
    std::size_t offered = 0;
    for (std::string halt; halts >> halt; ++offered) {
        const auto result = run(dir, {{"--halt", halt, "--gpus", "0", "--dry-run"}, "true\n"});
        EXPECT_EQ(result.exit_status, 0) << halt << ": " << result.err;
    }
    EXPECT_GE(offered, 7u);
    std::istringstream modes(bash_completes({"gpusched", "hypersearch", "--sampling-mode", ""}));
    offered = 0;
    for (std::string mode; modes >> mode; ++offered) {
        const auto result = run(
            dir, {{"hypersearch", "x {a}", "-p", "a", "1", "--sampling-mode", mode, "-n", "1"}});
        EXPECT_EQ(result.exit_status, 0) << mode << ": " << result.err;
    }
    EXPECT_EQ(offered, 3u);
}

// GPU ids come from `gpusched gpus`, here from CUDA_VISIBLE_DEVICES, for every --gpus, and
// the id after the last comma of a list is the one completed.
TEST(Completion, BashCompletesGpuIdsFromGpusched)
{
    const std::map<std::string, std::optional<std::string>> env = {{"CUDA_VISIBLE_DEVICES", "3,5"},
                                                                   {"GPUSCHED_GPUS", std::nullopt}};
    const auto gpusched = binary().string();
    EXPECT_EQ(bash_completes({gpusched, "--gpus", ""}, env), "3 5\n");
    EXPECT_EQ(bash_completes({gpusched, "-g", "3,"}, env), "3,5\n") << "3 is listed already";
    EXPECT_EQ(bash_completes({gpusched, "-g", "5,3,"}, env), "\n");
    EXPECT_EQ(bash_completes({gpusched, "exec", "--gpus", "5"}, env), "5\n");
    EXPECT_EQ(bash_completes({gpusched, "status", "--gpus", ""}, env), "3 5\n");
    EXPECT_EQ(bash_completes(
                  {(binary().parent_path() / "simple_gpu_scheduler").string(), "--gpus", ""}, env),
              "3 5\n");
}

TEST(Completion, BashCompletesTheOtherNames)
{
    TempDir dir;
    const auto script = "source " + (k_completions / "gpusched.bash").string() +
                        "; complete -p simple_gpu_scheduler simple_hypersearch";
    const auto bound = run(dir, {{"-c", script}, {}, {}, {}, "/bin/bash", {}});
    EXPECT_NE(bound.out.find("-F _gpusched simple_gpu_scheduler"), std::string::npos)
        << bound.out << bound.err;
    EXPECT_NE(bound.out.find("-F _simple_hypersearch simple_hypersearch"), std::string::npos)
        << bound.out << bound.err;
    // simple_hypersearch is the hypersearch command: its options, and no subcommand.
    EXPECT_EQ(bash_completes({"simple_hypersearch", "x {a}", "--s"}, {}, "_simple_hypersearch"),
              "--sampling-mode --seed\n");
    EXPECT_EQ(bash_completes({"simple_hypersearch", "x {a}", "--sampling-mode", "r"}, {},
                             "_simple_hypersearch"),
              "random\n");
    EXPECT_EQ(bash_completes({"simple_hypersearch", "wo"}, {}, "_simple_hypersearch"), "\n");
    EXPECT_EQ(bash_completes({"simple_gpu_scheduler", "--dry"}), "--dry-run\n");
}

TEST(Completion, ZshAndFishCompleteTheSameValuesUnderEveryName)
{
    const auto zsh = read_file(k_completions / "_gpusched");
    EXPECT_EQ(zsh.rfind("#compdef gpusched simple_gpu_scheduler simple_hypersearch\n", 0), 0u);
    EXPECT_NE(zsh.find(":value:(never now,fail=1 "), std::string::npos);
    EXPECT_NE(zsh.find(":value:(grid shuffled_grid random)'"), std::string::npos);
    EXPECT_NE(zsh.find(":GPU ids:_gpusched_gpu_ids'"), std::string::npos);
    EXPECT_NE(zsh.find("[[ $service == simple_hypersearch ]]"), std::string::npos);
    const auto fish = read_file(k_completions / "gpusched.fish");
    EXPECT_NE(fish.find("-l halt -x -a 'never now,fail=1 "), std::string::npos);
    EXPECT_NE(fish.find("-s g -l gpus -x -a '(__fish_complete_list , __gpusched_gpu_ids)'"),
              std::string::npos);
    const auto scheduler = read_file(k_completions / "simple_gpu_scheduler.fish");
    EXPECT_NE(scheduler.find("complete -c simple_gpu_scheduler "), std::string::npos);
    EXPECT_EQ(scheduler.find("complete -c gpusched "), std::string::npos);
    const auto hypersearch = read_file(k_completions / "simple_hypersearch.fish");
    EXPECT_NE(hypersearch.find("complete -c simple_hypersearch -l sampling-mode -x -a 'grid "
                               "shuffled_grid random'"),
              std::string::npos)
        << hypersearch;
    EXPECT_EQ(hypersearch.find("-l halt"), std::string::npos) << "the run's options are not its";
    // Where the shells are installed, they must read the scripts.
    TempDir dir;
    for (const auto& [shell, file] : std::vector<std::pair<std::string, std::string>>{
             {"/usr/bin/zsh", "_gpusched"}, {"/usr/bin/fish", "gpusched.fish"}}) {
        if (fs::exists(shell)) {
            const auto checked =
                run(dir, {{"-n", (k_completions / file).string()}, {}, {}, {}, shell, {}});
            EXPECT_EQ(checked.exit_status, 0) << shell << ": " << checked.err;
        }
    }
}

// What fish offers for `line`, each candidate with its description, through its completion
// script; nothing where fish is not installed.
std::optional<std::string>
fish_completes(const std::string& line, std::map<std::string, std::optional<std::string>> env = {})
{
    if (!fs::exists("/usr/bin/fish")) {
        return std::nullopt;
    }
    TempDir dir;
    const auto script = "source " + (k_completions / "gpusched.fish").string() +
                        "; complete --do-complete '" + line + "'";
    const auto result =
        run(dir, {{"--no-config", "-c", script}, {}, {}, std::move(env), "/usr/bin/fish", {}});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result.out;
}

TEST(Completion, FishKeepsEveryCharacterOfTheDescriptionsAndListsEachGpuOnce)
{
    const auto redis = fish_completes("gpusched submit --red");
    if (!redis) {
        GTEST_SKIP() << "fish is not installed";
    }
    EXPECT_NE(redis->find("--redis\tThe Redis server of a queue shared by several machines: "
                          "redis://[user:password@]host[:port][/db]"),
              std::string::npos)
        << *redis;
    EXPECT_NE(fish_completes("gpusched submit --d")->find("The local queue's SQLite database"),
              std::string::npos);
    const std::map<std::string, std::optional<std::string>> env = {{"CUDA_VISIBLE_DEVICES", "3,5"},
                                                                   {"GPUSCHED_GPUS", std::nullopt}};
    const auto ids = fish_completes(binary().string() + " --gpus 3,", env);
    ASSERT_TRUE(ids.has_value());
    EXPECT_EQ(split_lines(*ids).size(), 1u) << *ids;
    EXPECT_TRUE(ids->starts_with("3,5\t")) << *ids << "3 is listed already";
}

// zsh reads the specs as _arguments gets them: the quoting of each description holds.
TEST(Completion, ZshKeepsEveryCharacterOfTheDescriptions)
{
    if (!fs::exists("/usr/bin/zsh")) {
        GTEST_SKIP() << "zsh is not installed";
    }
    TempDir dir;
    // Outside an interactive completion the completion system is not loaded: these print
    // what they were given, one word a line.
    const auto script = "_arguments() { printf '%s\\n' \"$@\"; }; _describe() { :; }; "
                        "_files() { :; }; service=gpusched; words=(gpusched submit --re); "
                        "CURRENT=3; source " +
                        (k_completions / "_gpusched").string();
    const auto specs = run(dir, {{"-f", "-c", script}, {}, {}, {}, "/usr/bin/zsh", {}});
    EXPECT_EQ(specs.exit_status, 0) << specs.err;
    EXPECT_NE(specs.out.find("--redis[The Redis server of a queue shared by several machines: "
                             "redis://\\[user:password@\\]host\\[:port\\]\\[/db\\] (the "
                             "password may come from $REDISCLI_AUTH instead); without it the "
                             "queue is local]:value:_default\n"),
              std::string::npos)
        << specs.out;
    EXPECT_NE(specs.out.find("--db[The local queue's SQLite database"), std::string::npos)
        << specs.out;
}

TEST(Completion, EveryScriptOffersEveryOption)
{
    const auto zsh = read_file(k_completions / "_gpusched");
    const auto fish = read_file(k_completions / "gpusched.fish");
    const auto bash = read_file(k_completions / "gpusched.bash");
    ASSERT_FALSE(zsh.empty());
    ASSERT_FALSE(fish.empty());
    for (const std::string option : {"lock-dir", "no-wait", "key-file", "lease-timeout",
                                     "sampling-mode", "svg", "jobs-per-gpu", "failures"}) {
        EXPECT_NE(zsh.find("'--" + option + "["), std::string::npos) << option;
        EXPECT_NE(fish.find("-l " + option + " "), std::string::npos) << option;
        EXPECT_TRUE(bash.find("--" + option + " ") != std::string::npos ||
                    bash.find("--" + option + "\"") != std::string::npos)
            << option;
    }
    EXPECT_EQ(zsh.find("__probe"), std::string::npos) << "internal commands stay hidden";
}

// What zsh offers for `line`, one match a line as MATCH<TAB>WHAT ITS LISTING SHOWS, from its
// completion system with the script loaded by compinit (scripts/zsh_completes.zsh drives an
// interactive zsh); nothing where zsh is not installed.
std::optional<std::string> zsh_completes(const std::string& line,
                                         std::map<std::string, std::optional<std::string>> env = {})
{
    if (!fs::exists("/usr/bin/zsh")) {
        return std::nullopt;
    }
    TempDir dir;
    const auto result =
        run(dir, {{"-f", script("zsh_completes.zsh").string(), k_completions.string(), line},
                  {},
                  {},
                  std::move(env),
                  "/usr/bin/zsh",
                  {}});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result.out;
}

// The matches of a zsh or fish answer, in the order offered; and what is shown beside each.
std::vector<std::string> matches_of(const std::string& answer)
{
    std::vector<std::string> matches;
    for (const auto& line : split_lines(answer)) {
        matches.push_back(line.substr(0, line.find('\t')));
    }
    return matches;
}

std::string shown_beside(const std::string& answer, const std::string& match)
{
    for (const auto& line : split_lines(answer)) {
        if (line.starts_with(match + "\t")) {
            return line.substr(match.size() + 1);
        }
    }
    return "";
}

// The shells find `gpusched` as a user's do: on PATH, where the build put it.
std::map<std::string, std::optional<std::string>>
with_gpusched_on_path(std::map<std::string, std::optional<std::string>> env = {})
{
    env["PATH"] = binary().parent_path().string() + ":" + std::getenv("PATH");
    return env;
}

// A queue on each store with jobs in every state a verb tells apart, and labels: `cancel`
// offers the queued and running ones, `retry` the failed and cancelled ones, `logs` all.
class JobCompletion : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    JobCompletion() : QueueFixture(GetParam()) {}

    std::string submit_one(const std::string& command, std::vector<std::string> extra = {})
    {
        extra.push_back("--json");
        const auto result = run(m_dir, submit(command + "\n", std::move(extra)));
        EXPECT_EQ(result.exit_status, 0) << result.err;
        const auto ids = json_field(result.out, "ids");
        return ids.is_array() && ids.size() == 1 ? std::to_string(ids[0].get<std::int64_t>()) : "?";
    }

    // failed, succeeded, running (train), queued, cancelled, queued (sweep): the newest last.
    void make_jobs()
    {
        start_worker("0", {"--kill-after", "1s"});
        m_failed = submit_one("false");
        EXPECT_EQ(gpusched("wait", {m_failed}).exit_status, 1);
        m_succeeded = submit_one("true");
        EXPECT_EQ(gpusched("wait", {m_succeeded}).exit_status, 0);
        m_running =
            submit_one(fmt::format("echo started >> {}; sleep 60", log()), {"--name", "train"});
        ASSERT_TRUE(eventually([&] { return logged().contains("started"); }));
        m_queued = submit_one("echo 4"); // behind the running job: the worker has one GPU
        m_cancelled = submit_one("echo 5");
        EXPECT_EQ(gpusched("cancel", {m_cancelled}).exit_status, 0);
        m_labelled = submit_one("echo 6", {"--name", "sweep"});
    }

    // `gpusched COMMAND WHERE... WORDS...`, as a shell's words.
    std::vector<std::string> line(const std::string& command, std::vector<std::string> words)
    {
        std::vector<std::string> line = {binary().string(), command};
        const auto queue = where();
        line.insert(line.end(), queue.begin(), queue.end());
        line.insert(line.end(), words.begin(), words.end());
        return line;
    }
    static std::string joined(const std::vector<std::string>& words)
    {
        std::string text;
        for (const auto& word : words) {
            text += (text.empty() ? "" : " ") + word;
        }
        return text;
    }

    std::string m_failed, m_succeeded, m_running, m_queued, m_cancelled, m_labelled;
};

TEST_P(JobCompletion, EachShellOffersTheJobsTheCommandActsOnNewestFirst)
{
    make_jobs();
    const std::vector<std::string> unended = {m_labelled, m_queued, m_running, "sweep", "train"};
    EXPECT_EQ(bash_completes(line("cancel", {""})), joined(unended) + "\n");
    EXPECT_EQ(bash_completes(line("wait", {""})), joined(unended) + "\n");
    EXPECT_EQ(bash_completes(line("retry", {""})), joined({m_cancelled, m_failed}) + "\n");
    EXPECT_EQ(bash_completes(line("logs", {""})),
              joined({m_labelled, m_cancelled, m_queued, m_running, m_succeeded, m_failed, "sweep",
                      "train"}) +
                  "\n");
    // What is typed narrows them, and a job named already is not offered again.
    EXPECT_EQ(bash_completes(line("cancel", {"sw"})), "sweep\n");
    EXPECT_EQ(bash_completes(line("cancel", {m_labelled, ""})),
              joined({m_queued, m_running, "sweep", "train"}) + "\n");
    EXPECT_EQ(bash_completes(line("logs", {m_failed, ""})), "\n") << "logs shows one job";
    std::istringstream after(bash_completes(line("submit", {"--after", m_failed + ","})));
    std::string first_after;
    after >> first_after;
    EXPECT_EQ(first_after, m_failed + "," + m_labelled)
        << "submit --after completes the last job of a list, from every job";

    const auto fish = fish_completes(joined(line("cancel", {""})));
    if (fish) {
        EXPECT_EQ(matches_of(*fish), unended) << *fish;
        EXPECT_EQ(shown_beside(*fish, m_labelled), "sweep: echo 6 (queued)");
        EXPECT_EQ(shown_beside(*fish, m_queued), "echo 4 (queued)");
        EXPECT_TRUE(shown_beside(*fish, m_running).starts_with("train: echo started >> "));
        EXPECT_TRUE(shown_beside(*fish, m_running).ends_with("... (running)"));
        EXPECT_EQ(shown_beside(*fish, "sweep"), "label of job " + m_labelled);
        EXPECT_EQ(matches_of(*fish_completes(joined(line("retry", {""})))),
                  (std::vector<std::string>{m_cancelled, m_failed}));
    }
    std::vector<std::string> words = line("cancel", {""});
    words.front() = "gpusched";
    const auto zsh = zsh_completes(joined(words), with_gpusched_on_path());
    if (zsh) {
        EXPECT_EQ(matches_of(*zsh), unended) << *zsh;
        EXPECT_NE(shown_beside(*zsh, m_labelled).find("-- sweep: echo 6 (queued)"),
                  std::string::npos)
            << *zsh;
        EXPECT_NE(shown_beside(*zsh, "train").find("-- label of job " + m_running),
                  std::string::npos);
    }
}

// The queue is found as the command finds it: from --queue, and from the variables.
TEST_P(JobCompletion, TheQueueIsTheOneTheLineOrTheEnvironmentNames)
{
    const auto id = submit_one("echo queued");
    EXPECT_EQ(bash_completes(line("cancel", {"--queue", "other", ""})), "\n");
    const std::map<std::string, std::optional<std::string>> env = {
        {on_redis() ? "GPUSCHED_REDIS" : "GPUSCHED_DB", where().at(1)}};
    EXPECT_EQ(bash_completes({binary().string(), "cancel", ""}, env), id + "\n");
    EXPECT_EQ(bash_completes({binary().string(), "cancel", "--queue", ""}, env), "\n")
        << "an option's value is no job: bash completes it as a file";
    const auto fish = fish_completes(binary().string() + " cancel ", env);
    if (fish) {
        EXPECT_EQ(matches_of(*fish), std::vector<std::string>{id});
    }
}

// Whoever can write to a Redis server can write a job's fields: a label or a command with a
// tab or a newline makes no candidate of its own, and is shown escaped.
TEST_P(JobCompletion, AForgedRecordMakesNoCandidateOfItsOwn)
{
    if (!on_redis()) {
        GTEST_SKIP() << "a local queue's database is its user's own";
    }
    const auto id = submit_one("echo queued", {"--name", "sweep"});
    redis().cli({"HSET", "gpusched:{default}:job:" + id, "name", "sweep\n99\tforged", "command",
                 "echo\t1\n2"});
    TempDir dir;
    std::vector<std::string> args = {"__complete-jobs", "cancel", ""};
    const auto queue = where();
    args.insert(args.end(), queue.begin(), queue.end());
    const auto offered = run(dir, {args});
    EXPECT_EQ(offered.out, id + "\tsweep\\n99\\tforged: echo\\t1\\n2 (queued)\n");
}

// Completing starts no worker (a submit would, for a local queue none serves), and leaves
// the queue as it was.
TEST_P(JobCompletion, NoWorkerIsStarted)
{
    const auto id = submit_one("echo queued");
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(bash_completes(line("cancel", {""})), id + "\n");
    }
    // A completion's shell may still be on its way out (slow under the sanitizers); a worker
    // it started would stay.
    std::vector<pid_t> left;
    EXPECT_TRUE(eventually([&] {
        left = leftover_processes();
        if (on_redis()) {
            std::erase(left, redis().pid());
        }
        return left.empty();
    })) << left.size()
        << " processes left";
    const auto workers = gpusched("workers", {"--json"});
    ASSERT_EQ(workers.exit_status, 0) << workers.err;
    EXPECT_TRUE(json_field(workers.out, "workers").empty()) << workers.out;
    EXPECT_EQ(queue_status()["queued"], 1);
}

// Two thousand jobs: at most 100 are offered, the newest; typing an id's beginning finds the
// older ones; and the answer comes at once (the command gives up after a second anyway).
TEST_P(JobCompletion, AHugeQueueOffersItsNewestJobsAtOnce)
{
    std::string commands;
    for (int i = 0; i < 2000; ++i) {
        commands += "true\n";
    }
    const auto submitted = run(m_dir, submit(commands, {"--json"}));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    std::vector<std::int64_t> ids = json_field(submitted.out, "ids");
    ASSERT_EQ(ids.size(), 2000u);
    std::sort(ids.rbegin(), ids.rend());

    TempDir dir;
    std::vector<std::string> args = {"__complete-jobs", "cancel", ""};
    const auto queue = where();
    args.insert(args.end(), queue.begin(), queue.end());
    const auto began = std::chrono::steady_clock::now();
    const auto offered = run(dir, {args});
    const auto took = std::chrono::steady_clock::now() - began;
    EXPECT_EQ(offered.exit_status, 0);
    EXPECT_EQ(offered.err, "");
    const auto lines = split_lines(offered.out);
    ASSERT_EQ(lines.size(), 100u);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i], fmt::format("{}\ttrue (queued)", ids[i]));
    }
    EXPECT_LT(took, std::chrono::seconds(1));

    std::vector<std::string> beginning_42;
    for (const auto id : ids) {
        if (std::to_string(id).starts_with("42")) {
            beginning_42.push_back(std::to_string(id));
        }
    }
    ASSERT_FALSE(beginning_42.empty());
    EXPECT_EQ(bash_completes(line("cancel", {"42"})), joined(beginning_42) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Stores, JobCompletion, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

// Where there is no queue yet, nothing is offered and nothing is made: no database, no
// directory for it, and not a word on stderr.
TEST(Completion, JobsCompleteToNothingWhereThereIsNoQueueAndMakeNone)
{
    TempDir dir;
    const std::map<std::string, std::optional<std::string>> env = {
        {"XDG_STATE_HOME", (dir / "state").string()},
        {"GPUSCHED_DB", std::nullopt},
        {"GPUSCHED_REDIS", std::nullopt}};
    const auto named = (dir / "queue.db").string();
    EXPECT_EQ(bash_completes({binary().string(), "cancel", ""}, env), "\n");
    EXPECT_EQ(bash_completes({binary().string(), "logs", "--db", named, ""}, env), "\n");
    if (const auto fish = fish_completes(binary().string() + " retry ", env)) {
        EXPECT_EQ(*fish, "");
    }
    if (const auto zsh =
            zsh_completes("gpusched wait --db " + named + " ", with_gpusched_on_path(env))) {
        EXPECT_EQ(*zsh, "");
    }
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"__complete-jobs", "cancel", ""},
                                               {"__complete-jobs", "logs", "1", "--db", named},
                                               {"__complete-jobs", "submit", "", "--after"},
                                               {"__complete-jobs", "no-such-command", ""},
                                               {"__complete-jobs"}}) {
        const auto result = run(dir, {args, {}, {}, env});
        EXPECT_EQ(result.exit_status, 0) << args.back();
        EXPECT_EQ(result.out, "");
        EXPECT_EQ(result.err, "");
    }
    EXPECT_FALSE(fs::exists(dir / "state"));
    EXPECT_FALSE(fs::exists(named));
}

// A Redis server that does not answer (stopped, or a host gone) is given up on within a
// fraction of a second, with nothing offered and nothing said.
TEST(Completion, JobsCompleteToNothingAtOnceFromARedisThatDoesNotAnswer)
{
    RedisServer redis(Persistence::none);
    redis.pause();
    TempDir dir;
    for (const auto& url : {redis.url(), std::string("redis://127.0.0.1:1")}) {
        const auto began = std::chrono::steady_clock::now();
        const auto result = run(dir, {{"__complete-jobs", "cancel", "", "--redis", url}});
        EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(900)) << url;
        EXPECT_EQ(result.exit_status, 0) << url;
        EXPECT_EQ(result.out, "");
        EXPECT_EQ(result.err, "");
    }
    redis.resume();
}

} // namespace
} // namespace gpusched::testing
