// The manual page lists exactly the options --help lists, command by command: it is generated
// from the same definitions, and this proves the generator leaves none out.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace gpusched::testing {
namespace {

const fs::path k_manual = GPUSCHED_MANUAL;

// Long options named at the head of an option's entry in --help ("  -g,--gpus TEXT ...").
std::set<std::string> help_options(const std::vector<std::string>& command)
{
    TempDir dir;
    auto args = command;
    args.push_back("--help");
    const auto help = run(dir, {args});
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
std::set<std::string> manual_options(const std::string& section)
{
    std::set<std::string> options;
    bool inside = false;
    bool heading = false;
    const std::regex name(R"(\\fB\\-\\-([a-z0-9\\-]+)\\fR)");
    for (const auto& line : split_lines(read_file(k_manual))) {
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
         {"exec", "status", "submit", "worker", "queue", "hypersearch", "report", "gpus"}) {
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

} // namespace
} // namespace gpusched::testing
