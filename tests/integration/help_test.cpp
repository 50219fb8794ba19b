// --help as a new user reads it: named placeholders, options in groups, a usage line that puts
// the subcommand first, examples and the exit statuses at the end; and counts in messages
// that read right in the singular.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

const std::vector<std::vector<std::string>> k_commands = {
    {},        {"exec"},        {"status"}, {"submit"}, {"worker"},
    {"queue"}, {"hypersearch"}, {"report"}, {"gpus"}};

std::string help_of(const std::vector<std::string>& command)
{
    TempDir dir;
    auto args = command;
    args.push_back("--help");
    const auto help = run(dir, {args});
    EXPECT_EQ(help.exit_status, 0) << help.err;
    return help.out;
}

TEST(Help, NamesEveryPlaceholderInsteadOfCli11Types)
{
    // CLI11's own words for a value's type, alone or after a colon (FLOAT:NONNEGATIVE).
    const std::regex cli11_type(R"((^|[ :=])(TEXT|FLOAT|UINT|INT|POSITIVE|NONNEGATIVE)\b)");
    for (const auto& command : k_commands) {
        const auto help = help_of(command);
        for (const auto& line : split_lines(help)) {
            EXPECT_FALSE(std::regex_search(line, cli11_type))
                << (command.empty() ? "gpusched" : command.front()) << ": " << line;
        }
    }
    const auto help = help_of({});
    EXPECT_TRUE(has(help, "--timeout DURATION")) << help;
    EXPECT_TRUE(has(help, "-g,--gpus ID ...")) << help;
    EXPECT_TRUE(has(help, "--joblog FILE")) << help;
    EXPECT_TRUE(has(help, "--retries N")) << help;
    EXPECT_TRUE(has(help_of({"exec"}), "-n,--count N")) << help_of({"exec"});
    EXPECT_TRUE(has(help_of({"worker"}), "--lease-timeout DURATION"));
    EXPECT_TRUE(has(help_of({"submit"}), "--redis URL"));
}

// `gpusched help [SUBCOMMAND]` prints that help and exits 0, as git's and cargo's do: no look
// for GPUs (there is no driver here), and no file named `help` opened, even with GPUs named.
TEST(Help, HelpAsAWordPrintsTheHelp)
{
    TempDir dir;
    for (const auto& env : std::vector<std::map<std::string, std::optional<std::string>>>{
             {}, {{"GPUSCHED_GPUS", "0"}}}) {
        LaunchOptions main_help{{"help"}};
        main_help.env = env;
        const auto shown = run(dir, main_help);
        EXPECT_EQ(shown.exit_status, 0) << shown.err;
        EXPECT_EQ(shown.out, help_of({}));
        LaunchOptions submit_help{{"help", "submit"}};
        submit_help.env = env;
        const auto submit = run(dir, submit_help);
        EXPECT_EQ(submit.exit_status, 0) << submit.err;
        EXPECT_EQ(submit.out, help_of({"submit"}));
        EXPECT_TRUE(has(submit.out, "--after-ok")) << submit.out;
        EXPECT_EQ(run(dir, {{"help", "hypersearch"}}).out, help_of({"hypersearch"}));
    }
}

TEST(Help, GroupsTheOptionsOfARun)
{
    const auto help = help_of({});
    std::vector<std::size_t> at;
    for (const auto* group :
         {"\nGPUs:\n", "\nJobs:\n", "\nRecords:\n", "\nLeases:\n", "\nLog:\n", "\nOther:\n"}) {
        at.push_back(help.find(group));
        EXPECT_NE(at.back(), std::string::npos) << group << " in\n" << help;
    }
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << help;
    EXPECT_LT(help.find("--gpus-per-job"), help.find("\nJobs:\n")) << "in GPUs";
    EXPECT_GT(help.find("--resume-failed"), help.find("\nRecords:\n")) << help;
    EXPECT_GT(help.find("-h,--help"), help.find("\nOther:\n")) << "--help comes last";
}

TEST(Help, TheUsageLinePutsTheSubcommandFirst)
{
    const auto help = help_of({});
    EXPECT_TRUE(has(help, "Usage: gpusched [OPTIONS] [FILE ...]\n"
                          "       gpusched COMMAND [OPTIONS] [ARGS ...]\n"))
        << help;
    EXPECT_FALSE(has(help, "[SUBCOMMAND]")) << help;
    EXPECT_TRUE(has(help_of({"exec"}), "Usage: gpusched exec [OPTIONS]")) << help_of({"exec"});

    TempDir dir;
    const auto link = dir / "simple_gpu_scheduler";
    fs::create_symlink(binary(), link);
    const auto named = run(dir, {{"--help"}, std::nullopt, std::nullopt, {}, link});
    EXPECT_TRUE(has(named.out, "Usage: simple_gpu_scheduler [OPTIONS] [FILE ...]")) << named.out;
}

// As git's: the commands come first, a line each under the usage, in groups; then the options
// of a run. The whole help fits a terminal of 80 columns.
TEST(Help, ListsTheCommandsFirstALineEach)
{
    const auto help = help_of({});
    const auto commands = help.find("\nCommands:\n");
    ASSERT_NE(commands, std::string::npos) << help;
    EXPECT_LT(commands, help.find("\nPositionals:\n"));
    EXPECT_LT(help.find("Usage: "), commands);
    EXPECT_FALSE(has(help, "Subcommands:")) << "listed once, at the top";
    const auto block = help.substr(commands, help.find("\nPositionals:\n") - commands);
    std::vector<std::string> listed;
    const std::regex entry(R"(^    ([a-z]+) +[A-Z].*$)");
    for (const auto& line : split_lines(block)) {
        std::smatch found;
        if (std::regex_match(line, found, entry)) {
            listed.push_back(found[1]);
        }
    }
    const std::vector<std::string> every = {
        "exec",  "status", "gpus",  "submit", "worker", "queue",       "workers", "cancel",
        "pause", "resume", "retry", "logs",   "wait",   "hypersearch", "report",  "serve"};
    EXPECT_EQ(listed, every) << block;
    EXPECT_TRUE(has(block, "  On a queue of jobs (local, or in Redis):\n    submit ")) << block;
    EXPECT_TRUE(has(block, "man gpusched-COMMAND")) << block;
    for (const auto& command : k_commands) {
        for (const auto& line : split_lines(help_of(command))) {
            EXPECT_LE(line.size(), 80u)
                << (command.empty() ? "gpusched" : command.front()) << ": " << line;
        }
    }
    // Each command's help ends with its manual page.
    EXPECT_TRUE(help_of({"submit"}).ends_with("\nThe manual: man gpusched-submit.\n"))
        << help_of({"submit"});
    EXPECT_TRUE(help_of({"hypersearch"}).ends_with("\nThe manual: man gpusched-hypersearch.\n"))
        << help_of({"hypersearch"});
}

TEST(Help, EndsWithExamplesAndTheExitStatuses)
{
    const auto help = help_of({});
    const auto examples = help.find("\nExamples:\n");
    const auto statuses = help.find("\nExit status:\n");
    ASSERT_NE(examples, std::string::npos) << help;
    ASSERT_NE(statuses, std::string::npos) << help;
    EXPECT_GT(examples, help.find("\nOther:\n")) << "after the options";
    EXPECT_TRUE(has(help, "  255    a usage or system error (never a count)\n")) << help;
    EXPECT_TRUE(has(help, "75 no GPU free in time")) << help;
    EXPECT_TRUE(has(help_of({"hypersearch"}), "\nExamples:\n"));
}

TEST(Help, TheExamplesRun)
{
    // The first example, as printed, on two GPU ids: each line of the file runs.
    TempDir dir;
    write_file(dir / "commands.txt", "echo one\necho two\n");
    const auto help = help_of({});
    const auto example = help.substr(help.find("\nExamples:\n") + 11);
    ASSERT_EQ(example.rfind("  gpusched --gpus 0,1 commands.txt", 0), 0u) << example;
    const auto result = run(dir, {{"--gpus", "0,1", "commands.txt"},
                                  std::nullopt,
                                  std::nullopt,
                                  {},
                                  std::nullopt,
                                  dir.path()});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(split_lines(result.out).size(), 2u) << result.out;
}

TEST(Help, OneIsSingular)
{
    TempDir dir;
    const auto one = run(dir, {{"--gpus", "0"}, "true\n"});
    EXPECT_EQ(one.exit_status, 0) << one.err;
    EXPECT_TRUE(has(one.err, "] 1 job: 1 succeeded, 0 failed")) << one.err;
    const auto two = run(dir, {{"--gpus", "0"}, "true\ntrue\n"});
    EXPECT_TRUE(has(two.err, "] 2 jobs: 2 succeeded, 0 failed")) << two.err;

    const auto too_many = run(dir, {{"--gpus", "0", "--gpus-per-job", "2"}, "true\n"});
    EXPECT_TRUE(has(too_many.err, "--gpus-per-job 2 is more than the 1 GPU in the pool (0)"))
        << too_many.err;

    // exec: a GPU held by a command that exec became (sleep), then one that finds none free.
    Process holder(dir, {{"exec", "--gpus", "0", "--", "sleep", "60"}});
    ASSERT_TRUE(eventually([&] {
        std::ifstream comm(fs::path("/proc") / std::to_string(holder.pid()) / "comm");
        std::string name;
        return std::getline(comm, name) && name == "sleep";
    }));
    const auto refused = run(dir, {{"exec", "--gpus", "0", "--no-wait", "--", "true"}});
    EXPECT_EQ(refused.exit_status, 75) << refused.err;
    EXPECT_TRUE(has(refused.err, "no GPU free among 0 (leased: GPU 0 by")) << refused.err;
    const auto timed_out = run(dir, {{"exec", "--gpus", "0", "--timeout", "0.2s", "--", "true"}});
    EXPECT_EQ(timed_out.exit_status, 75) << timed_out.err;
    EXPECT_TRUE(has(timed_out.err, "no GPU free within 0.2 s")) << timed_out.err;
    holder.signal(SIGTERM);
    holder.wait();
}

} // namespace
} // namespace gpusched::testing
