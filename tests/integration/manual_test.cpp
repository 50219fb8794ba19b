// The manual page lists exactly the options --help lists, command by command: it is generated
// from the same definitions, and this proves the generator leaves none out.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

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
    for (const std::string command :
         {"exec", "status", "submit", "worker", "queue", "cancel", "pause", "retry", "logs", "wait",
          "hypersearch", "report", "gpus"}) {
        const auto listed = manual_options(".SS gpusched " + command);
        EXPECT_FALSE(listed.empty()) << command;
        EXPECT_EQ(listed, help_options({command})) << command;
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
