#include <gpusched/failed_jobs.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(FailedJobs, CommandsAreShownOnOneLine)
{
    EXPECT_EQ(one_line_command("python train.py"), "python train.py");
    EXPECT_EQ(one_line_command("for i in 1 2\ndo echo $i\r\ndone\n"),
              "for i in 1 2 do echo $i  done");
    EXPECT_EQ(one_line_command(std::string(150, 'x'), 100), std::string(100, 'x') + "...");
    // A cut never splits a character: the é (two bytes) at the limit stays whole.
    EXPECT_EQ(one_line_command("abc\xc3\xa9xyz", 4), "abc\xc3\xa9...");
}

TEST(FailedJobs, NamesEachJobWithItsOutcomeAttemptsAndOutput)
{
    const std::vector<FailedJob> jobs = {
        {7, "exit 3", 2, "python train.py --lr 3", "output in out/7.2.out, out/7.2.err"},
        {9, "killed by SIGKILL (timed out)", 1, "sleep 100", ""},
    };
    EXPECT_EQ(describe_failed_jobs(jobs, 2, "see jobs.log"),
              (std::vector<std::string>{
                  "failed job 7: exit 3 after 2 attempts: python train.py --lr 3; output in "
                  "out/7.2.out, out/7.2.err",
                  "failed job 9: killed by SIGKILL (timed out): sleep 100"}));
}

TEST(FailedJobs, CountsTheJobsNotNamed)
{
    std::vector<FailedJob> jobs;
    for (JobId id = 1; id <= 10; ++id) {
        jobs.push_back({id, "exit 1", 1, "false", ""});
    }
    const auto lines = describe_failed_jobs(jobs, 13, "see jobs.log");
    ASSERT_EQ(lines.size(), 11u);
    EXPECT_EQ(lines[9], "failed job 10: exit 1: false");
    EXPECT_EQ(lines[10], "and 3 more failed jobs: see jobs.log");
    EXPECT_EQ(describe_failed_jobs(jobs, 11, "").back(), "and 1 more failed job");
    EXPECT_TRUE(describe_failed_jobs({}, 0, "see jobs.log").empty());
}

} // namespace
} // namespace gpusched
