#include <gpusched/joblog_report.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace gpusched {
namespace {

JoblogRecord attempt(JobId seq, const char* gpu, double start, double runtime, int exit_code = 0,
                     int signal = 0, std::string command = "train")
{
    return JoblogRecord{seq, start, runtime, exit_code, signal, std::move(command), gpu};
}

std::size_t count(const std::string& text, const std::string& needle)
{
    std::size_t found = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        ++found;
    }
    return found;
}

const std::vector<JoblogRecord> k_log = {
    attempt(1, "1", 100, 10),       attempt(2, "0", 100, 4, 1), attempt(2, "0", 104, 4),
    attempt(3, "0", 110, 5, 0, 15), attempt(4, "1", 112, 2, 2),
};

TEST(JoblogReport, CountsJobsByTheirLastAttempt)
{
    const auto summary = summarize_joblog(k_log);
    EXPECT_EQ(summary.jobs, 4u);
    EXPECT_EQ(summary.attempts, 5u);
    EXPECT_EQ(summary.succeeded, 2u);
    EXPECT_EQ(summary.failed, 2u);
    EXPECT_EQ(summary.failed_attempts_by_outcome,
              (std::map<std::string, std::size_t>{
                  {"exit 1", 1}, {"exit 2", 1}, {"killed by SIGTERM", 1}}));
    EXPECT_DOUBLE_EQ(summary.total_runtime, 25);
    EXPECT_DOUBLE_EQ(summary.last_end - summary.first_start, 15);
}

TEST(JoblogReport, BusyShareAndLongestIdleGapPerGpu)
{
    const auto summary = summarize_joblog(k_log);
    ASSERT_EQ(summary.gpus.size(), 2u);
    EXPECT_EQ(summary.gpus[0].gpu, "0");
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 13);        // 100-108 and 110-115
    EXPECT_DOUBLE_EQ(summary.gpus[0].longest_idle, 2); // 108-110
    EXPECT_EQ(summary.gpus[1].gpu, "1");
    EXPECT_DOUBLE_EQ(summary.gpus[1].busy, 12);        // 100-110 and 112-114
    EXPECT_DOUBLE_EQ(summary.gpus[1].longest_idle, 2); // 110-112, then 114-115 is shorter
    const auto text = format_summary(summary);
    EXPECT_NE(text.find("jobs      4 (2 succeeded, 2 failed), 5 attempts"), std::string::npos)
        << text;
    EXPECT_NE(text.find("busy  86.7% (3 attempts)"), std::string::npos) << text;
}

TEST(JoblogReport, OverlappingAttemptsOnOneGpuAreCountedOnce)
{
    const auto summary = summarize_joblog({attempt(1, "0", 0, 10), attempt(2, "0", 5, 10)});
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 15);
}

TEST(JoblogReport, AJobOfSeveralGpusKeepsEachBusyAndHasABarOnEach)
{
    const std::vector<JoblogRecord> log = {attempt(1, "0,1", 0, 10), attempt(2, "1", 10, 5)};
    const auto summary = summarize_joblog(log);
    ASSERT_EQ(summary.gpus.size(), 2u);
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 10);
    EXPECT_DOUBLE_EQ(summary.gpus[1].busy, 15);
    EXPECT_EQ(count(render_timeline_svg(log), "<rect class=\"attempt "), 3u);
}

TEST(JoblogReport, GpuRowsFollowIndexOrder)
{
    const auto summary = summarize_joblog({attempt(1, "10", 0, 1), attempt(2, "GPU-b", 0, 1),
                                           attempt(3, "2", 0, 1), attempt(4, "GPU-a", 0, 1)});
    std::vector<std::string> order;
    for (const auto& gpu : summary.gpus) {
        order.push_back(gpu.gpu);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"2", "10", "GPU-a", "GPU-b"}));
}

TEST(JoblogReport, SvgHasOneBarPerAttemptColouredByOutcome)
{
    const auto svg = render_timeline_svg(k_log);
    EXPECT_EQ(count(svg, "<rect class=\"attempt "), 5u);
    EXPECT_EQ(count(svg, "class=\"attempt ok\""), 2u);
    EXPECT_EQ(count(svg, "class=\"attempt failed\""), 2u);
    EXPECT_EQ(count(svg, "class=\"attempt killed\""), 1u);
    EXPECT_EQ(count(svg, "<title>"), 5u);
    EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(JoblogReport, CommandsAreEscapedIntoWellFormedText)
{
    const auto svg = render_timeline_svg({attempt(
        1, "0", 0, 1, 0, 0, "awk '{print $1}' < in > \"out\" && echo \xff\x01 caf\xc3\xa9")});
    EXPECT_NE(svg.find("awk '{print $1}' &lt; in &gt; &quot;out&quot; &amp;&amp; echo "
                       "\xEF\xBF\xBD\xEF\xBF\xBD caf\xc3\xa9"),
              std::string::npos)
        << svg;
}

TEST(JoblogReport, HugeAndInfiniteTimesStillEnd)
{
    // Records are checked when read; the report itself must end on whatever it is given.
    for (const double huge : {1e300, 1.7e308, std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()}) {
        const std::vector<JoblogRecord> log = {attempt(1, "0", 0, 1), attempt(2, "1", huge, huge)};
        const auto svg = render_timeline_svg(log);
        EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7) << huge;
        EXPECT_LE(count(svg, "class=\"grid\""), 21u) << huge;
        EXPECT_FALSE(format_summary(summarize_joblog(log)).empty());
    }
}

} // namespace
} // namespace gpusched
