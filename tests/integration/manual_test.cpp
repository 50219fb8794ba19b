// The manual page lists exactly the options --help lists, command by command: it is generated
// from the same definitions, and this proves the generator leaves none out.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

namespace gpusched::testing {
namespace {

const fs::path k_manual = GPUSCHED_MANUAL;

const fs::path k_manual_dir = GPUSCHED_MANUAL_DIR;

// Long options named at the head of an option's entry in --help ("  -g,--gpus TEXT ..."),
// of gpusched or of `program`, the name it is called by.
std::set<std::string> help_options(const std::vector<std::string>& command,
                                   const std::string& program = "gpusched")
{
    TempDir dir;
    auto args = command;
    args.push_back("--help");
    const auto help = run(dir, {args, {}, {}, {}, binary().parent_path() / program});
    EXPECT_EQ(help.exit_status, 0) << help.err;
    std::set<std::string> options;
    const std::regex name(R"((?:^|[ ,])--([a-z][a-z0-9-]*))");
    for (const auto& line : split_lines(help.out)) {
        if (!line.starts_with("  -")) {
            continue;
        }
        const auto head = line.substr(0, line.find("  ", 2));
        for (std::sregex_iterator it(head.begin(), head.end(), name), end; it != end; ++it) {
            options.insert((*it)[1]);
        }
    }
    return options;
}

// The same from the manual's section for `section` (OPTIONS, or ".SS gpusched NAME").
std::set<std::string> manual_options(const std::string& section, const fs::path& page = k_manual)
{
    std::set<std::string> options;
    bool inside = false;
    bool heading = false;
    const std::regex name(R"(\\fB\\-\\-([a-z0-9\\-]+)\\fR)");
    for (const auto& line : split_lines(read_file(page))) {
        if (line.starts_with(".SH") || line.starts_with(".SS")) {
            inside = line == section;
            continue;
        }
        if (inside && heading) {
            for (std::sregex_iterator it(line.begin(), line.end(), name), end; it != end; ++it) {
                options.insert(std::regex_replace((*it)[1].str(), std::regex(R"(\\-)"), "-"));
            }
        }
        heading = line == ".TP";
    }
    return options;
}

TEST(Manual, ListsEveryOptionOfEveryCommandThatHelpLists)
{
    ASSERT_TRUE(fs::exists(k_manual)) << k_manual;
    EXPECT_EQ(manual_options(".SH OPTIONS"), help_options({}));
    // The queue options are listed once, for every queue command.
    const auto queue_options = manual_options(".SS Queue options");
    EXPECT_EQ(queue_options, (std::set<std::string>{"redis", "db", "queue", "key-file"}));
    for (const std::string command :
         {"exec", "status", "submit", "worker", "queue", "cancel", "pause", "retry", "logs", "wait",
          "hypersearch", "report", "gpus"}) {
        const auto listed = manual_options(".SS gpusched " + command);
        EXPECT_FALSE(listed.empty()) << command;
        std::set<std::string> own;
        std::set<std::string> shared;
        for (const auto& option : help_options({command})) {
            (queue_options.contains(option) ? shared : own).insert(option);
        }
        EXPECT_EQ(listed, own) << command;
        const bool queue_command = !shared.empty();
        EXPECT_EQ(queue_command, command != "exec" && command != "status" &&
                                     command != "hypersearch" && command != "report" &&
                                     command != "gpus")
            << command;
    }
}

TEST(Manual, PassesMandocsLint)
{
    if (std::system("command -v mandoc > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "mandoc is not installed (apt-get install mandoc)";
    }
    for (const auto* name : {"gpusched", "simple_gpu_scheduler", "simple_hypersearch"}) {
        TempDir dir;
        const auto page = k_manual_dir / (std::string(name) + ".1");
        LaunchOptions lint{{"-c", "mandoc -Tlint -W style " + page.string() + " 2>&1"}};
        lint.program = "/bin/sh";
        const auto linted = run(dir, lint);
        EXPECT_EQ(linted.exit_status, 0) << linted.out << linted.err;
        EXPECT_EQ(linted.out, "") << name;
    }
}

TEST(Manual, ReadInAPagerIdentifiersAreWholeAndCodeIsNoMarkdown)
{
    if (std::system("man --version > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "man is not installed";
    }
    TempDir dir;
    LaunchOptions shown{
        {"-c", "LANG=C.UTF-8 MANWIDTH=80 man -l " + k_manual.string() + " 2>/dev/null"}};
    shown.program = "/bin/sh";
    const auto page = run(dir, shown);
    ASSERT_EQ(page.exit_status, 0) << page.err;
    for (const auto& word : {"$CUDA_VISIBLE_DEVICES", "redis://", "simple_gpu_scheduler"}) {
        EXPECT_NE(page.out.find(word), std::string::npos) << word;
    }
    for (const auto& line : split_lines(page.out)) {
        EXPECT_FALSE(line.ends_with("\u2010")) << "hyphenated: " << line;
        EXPECT_EQ(line.find('`'), std::string::npos) << line;
    }
}

TEST(Manual, NamesItsVersionAndTheExitStatuses)
{
    const auto manual = read_file(k_manual);
    EXPECT_EQ(manual.find("@OPTIONS"), std::string::npos) << "a marker left in";
    EXPECT_EQ(manual.find("@VERSION@"), std::string::npos);
    EXPECT_NE(manual.find(".SH EXIT STATUS"), std::string::npos);
    EXPECT_NE(manual.find(".B GPUSCHED_LOCK_DIR"), std::string::npos) << "environment listed";
}

// `man simple_hypersearch` and `man simple_gpu_scheduler` are about the command of that name,
// with the options it takes when called so.
TEST(Manual, EachNameGpuschedIsInstalledUnderHasItsPage)
{
    const auto hypersearch = k_manual_dir / "simple_hypersearch.1";
    const auto scheduler = k_manual_dir / "simple_gpu_scheduler.1";
    ASSERT_TRUE(fs::exists(hypersearch));
    ASSERT_TRUE(fs::exists(scheduler));
    const auto listed = manual_options(".SH OPTIONS", hypersearch);
    EXPECT_FALSE(listed.empty());
    EXPECT_EQ(listed, help_options({}, "simple_hypersearch"));
    EXPECT_EQ(manual_options(".SH OPTIONS", scheduler), help_options({}, "simple_gpu_scheduler"));
    for (const auto& [page, name] : {std::pair{hypersearch, "simple_hypersearch"},
                                     std::pair{scheduler, "simple_gpu_scheduler"}}) {
        const auto text = read_file(page);
        EXPECT_NE(text.find(fmt::format(".SH NAME\n{} \\- ", name)), std::string::npos) << name;
        EXPECT_EQ(text.find("@OPTIONS"), std::string::npos) << name;
        EXPECT_EQ(text.find("@VERSION@"), std::string::npos) << name;
        EXPECT_NE(text.find(".BR gpusched (1)"), std::string::npos) << name;
    }
    EXPECT_NE(read_file(k_manual).find(".BR simple_hypersearch (1)"), std::string::npos);

    // As man shows it, where man is installed.
    if (!fs::exists("/usr/bin/man")) {
        return;
    }
    TempDir dir;
    const auto shown =
        run(dir, {{"-l", hypersearch.string()},
                  {},
                  {},
                  {{"MANPAGER", "cat"}, {"PAGER", "cat"}, {"MANWIDTH", "200"}, {"LC_ALL", "C"}},
                  fs::path("/usr/bin/man")});
    EXPECT_EQ(shown.exit_status, 0) << shown.err;
    EXPECT_NE(shown.out.find("simple_hypersearch - print the commands of a grid or random"),
              std::string::npos)
        << shown.out;
    EXPECT_NE(shown.out.find("--sampling-mode"), std::string::npos) << shown.out;
}

} // namespace
} // namespace gpusched::testing
