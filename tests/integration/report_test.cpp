// gpusched report on a job log written by a real run.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpusched::testing {
namespace {

// xmllint's answer to an XPath expression on `file`, or nothing when xmllint is missing.
std::optional<std::string> xpath(const TempDir& dir, const fs::path& file,
                                 const std::string& expression)
{
    if (!fs::exists("/usr/bin/xmllint")) {
        return std::nullopt;
    }
    const auto result = run(dir, {{"--xpath", expression, file.string()},
                                  std::nullopt,
                                  std::nullopt,
                                  {},
                                  fs::path("/usr/bin/xmllint")});
    EXPECT_EQ(result.exit_status, 0) << "not well-formed: " << result.err;
    auto answer = result.out;
    while (!answer.empty() && answer.back() == '\n') {
        answer.pop_back();
    }
    return answer;
}

TEST(Report, SummarisesAJoblogAndDrawsOneBarPerAttempt)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto ran =
        run(dir, {{"--gpus", "0,1", "--retries", "1", "--joblog", joblog.string(), "-q"},
                  "sleep 0.2\nexit 3\nsleep 0.1 && echo '<&>' \xff\n"});
    ASSERT_EQ(ran.exit_status, 1) << ran.err;

    const auto svg = dir / "timeline.svg";
    const auto report = run(dir, {{"report", joblog.string(), "--svg", svg.string()}});
    ASSERT_EQ(report.exit_status, 0) << report.err;
    EXPECT_NE(report.out.find("jobs      3 (2 succeeded, 1 failed), 4 attempts"), std::string::npos)
        << report.out;
    EXPECT_NE(report.out.find("exit 3: 2"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("GPU 0"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("longest idle gap"), std::string::npos) << report.out;

    const auto bars =
        xpath(dir, svg, "count(//*[local-name()='rect'][starts-with(@class,'attempt')])");
    if (!bars) {
        GTEST_SKIP() << "xmllint (Debian's libxml2-utils) is needed to check the SVG";
    }
    EXPECT_EQ(*bars, "4");
    const auto failed = xpath(dir, svg, "count(//*[local-name()='rect'][@class='attempt failed'])");
    EXPECT_EQ(failed.value_or(""), "2");
}

TEST(Report, BadJoblogIsAUsageErrorNamingTheLine)
{
    TempDir dir;
    write_file(dir / "bad.log", "Seq\tHost\nnot a record\n");
    const auto result = run(dir, {{"report", (dir / "bad.log").string()}});
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_NE(result.err.find("bad.log:2: not a job log record"), std::string::npos) << result.err;
    const auto missing = run(dir, {{"report", (dir / "missing.log").string()}});
    EXPECT_EQ(missing.exit_status, 2);
}

} // namespace
} // namespace gpusched::testing
