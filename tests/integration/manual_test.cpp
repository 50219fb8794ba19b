// The manual page lists exactly the options --help lists, command by command: it is generated
// from the same definitions, and this proves the generator leaves none out.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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

// The same from section `section` of a page (".SH OPTIONS"), its subsections (.SS) included.
std::set<std::string> manual_options(const std::string& section, const fs::path& page = k_manual)
{
    std::set<std::string> options;
    bool inside = false;
    bool heading = false;
    const std::regex name(R"(\\fB\\-\\-([a-z0-9\\-]+)\\fR)");
    for (const auto& line : split_lines(read_file(page))) {
        if (line.starts_with(".SH")) {
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

// The commands --help lists, each with its line: the name and its summary.
std::vector<std::pair<std::string, std::string>> listed_commands()
{
    TempDir dir;
    const auto help = run(dir, {{"--help"}}).out;
    const auto block = help.substr(help.find("\nCommands:\n"));
    std::vector<std::pair<std::string, std::string>> commands;
    const std::regex entry(R"(^    ([a-z]+) +(.+)$)");
    for (const auto& line : split_lines(block.substr(0, block.find("\n\n")))) {
        std::smatch found;
        if (std::regex_match(line, found, entry)) {
            commands.emplace_back(found[1], found[2]);
        }
    }
    EXPECT_GE(commands.size(), 16u) << help;
    return commands;
}

fs::path page_of(const std::string& command)
{
    return k_manual_dir / ("gpusched-" + command + ".1");
}

// Every page made: gpusched(1), one per command, and one per name it is installed under.
std::vector<fs::path> every_page()
{
    std::vector<fs::path> pages = {k_manual, k_manual_dir / "simple_gpu_scheduler.1",
                                   k_manual_dir / "simple_hypersearch.1"};
    for (const auto& [command, summary] : listed_commands()) {
        pages.push_back(page_of(command));
    }
    return pages;
}

TEST(Manual, ListsEveryOptionOfEveryCommandThatHelpLists)
{
    ASSERT_TRUE(fs::exists(k_manual)) << k_manual;
    EXPECT_EQ(manual_options(".SH OPTIONS"), help_options({}));
    for (const auto& [command, summary] : listed_commands()) {
        const auto page = page_of(command);
        ASSERT_TRUE(fs::exists(page)) << command << " has no page " << page;
        const auto listed = manual_options(".SH OPTIONS", page);
        EXPECT_TRUE(listed.contains("help")) << command;
        EXPECT_EQ(listed, help_options({command})) << command;
    }
}

// As git's and podman's: gpusched(1) lists the commands, and each has a page of its own with
// its NAME line (the summary --help shows), synopsis, description, options, the variables
// its options read, its exit status and examples, which points back at gpusched(1).
TEST(Manual, EachCommandHasItsPage)
{
    const auto overview = read_file(k_manual);
    const auto see_also = overview.substr(overview.find(".SH SEE ALSO"));
    const auto commands_section =
        overview.substr(overview.find(".SH COMMANDS"),
                        overview.find(".SH OPTIONS") - overview.find(".SH COMMANDS"));
    const std::regex env_of_option(R"(Env:(GPUSCHED_[A-Z_]+))");
    for (const auto& [command, summary] : listed_commands()) {
        const auto page = read_file(page_of(command));
        auto upper = command;
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        auto lowered = summary;
        lowered.front() =
            static_cast<char>(std::tolower(static_cast<unsigned char>(lowered.front())));
        const auto roff_name = "gpusched\\-" + command;
        EXPECT_TRUE(page.starts_with(".TH GPUSCHED\\-" + upper + " 1 ")) << command;
        EXPECT_NE(page.find(fmt::format(".SH NAME\n{} \\- {}\n", roff_name, lowered)),
                  std::string::npos)
            << command << ": " << lowered;
        for (const auto& section :
             {".SH SYNOPSIS\n.B gpusched " + command, std::string(".SH DESCRIPTION\n"),
              std::string(".SH OPTIONS\n"), std::string(".SH EXIT STATUS\n"),
              std::string(".SH EXAMPLES\n"), std::string(".SH SEE ALSO\n.BR gpusched (1)")}) {
            EXPECT_NE(page.find(section), std::string::npos) << command << ": " << section;
        }
        for (const auto* marker : {"@OPTIONS", "@ENVIRONMENT", "@NAME", "@VERSION@", "@DATE@"}) {
            EXPECT_EQ(page.find(marker), std::string::npos) << command << ": " << marker;
        }
        EXPECT_NE(see_also.find(".BR " + roff_name + " (1)"), std::string::npos) << command;
        EXPECT_NE(commands_section.find(".TP\n.BR " + roff_name + " (1)\n" + summary + ".\n"),
                  std::string::npos)
            << command;

        TempDir dir;
        const auto help = run(dir, {{command, "--help"}}).out;
        const auto environment_at = page.find(".SH ENVIRONMENT");
        const auto environment =
            environment_at == std::string::npos
                ? std::string()
                : page.substr(environment_at, page.find(".SH EXIT STATUS") - environment_at);
        for (std::sregex_iterator it(help.begin(), help.end(), env_of_option), end; it != end;
             ++it) {
            EXPECT_NE(environment.find(".B " + (*it)[1].str() + "\n"), std::string::npos)
                << command << " reads " << (*it)[1] << ", which its ENVIRONMENT does not list";
        }
    }
}

TEST(Manual, PassesMandocsLint)
{
    if (std::system("command -v mandoc > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "mandoc is not installed (apt-get install mandoc)";
    }
    std::size_t made = 0;
    for (const auto& entry : fs::directory_iterator(k_manual_dir)) {
        made += entry.path().extension() == ".1" ? 1 : 0;
    }
    const auto pages = every_page();
    EXPECT_EQ(made, pages.size()) << "a page made that no command has, or the other way round";
    for (const auto& page : pages) {
        TempDir dir;
        LaunchOptions lint{{"-c", "mandoc -Tlint -W style " + page.string() + " 2>&1"}};
        lint.program = "/bin/sh";
        const auto linted = run(dir, lint);
        EXPECT_EQ(linted.exit_status, 0) << linted.out << linted.err;
        EXPECT_EQ(linted.out, "") << page;
    }
}

TEST(Manual, ReadInAPagerIdentifiersAreWholeAndCodeIsNoMarkdown)
{
    if (std::system("man --version > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "man is not installed";
    }
    const auto read = [](const fs::path& manual) {
        TempDir dir;
        LaunchOptions shown{
            {"-c", "LANG=C.UTF-8 MANWIDTH=80 man -l " + manual.string() + " 2>/dev/null"}};
        shown.program = "/bin/sh";
        const auto page = run(dir, shown);
        EXPECT_EQ(page.exit_status, 0) << page.err;
        return page.out;
    };
    const auto overview = read(k_manual);
    for (const auto& word :
         {"$CUDA_VISIBLE_DEVICES", "redis://", "simple_gpu_scheduler", "gpusched-submit(1)"}) {
        EXPECT_NE(overview.find(word), std::string::npos) << word;
    }
    const auto submit = read(page_of("submit"));
    for (const auto& word : {"gpusched-submit - queue commands for workers to run",
                             "--after-ok IDS", "redis://", "GPUSCHED_REDIS"}) {
        EXPECT_NE(submit.find(word), std::string::npos) << word << " in\n" << submit;
    }
    for (const auto& page : every_page()) {
        for (const auto& line : split_lines(read(page))) {
            EXPECT_FALSE(line.ends_with("\u2010")) << page << ": hyphenated: " << line;
            EXPECT_EQ(line.find('`'), std::string::npos) << page << ": " << line;
        }
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
