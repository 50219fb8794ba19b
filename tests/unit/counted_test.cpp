// Counts in messages: "1 job", never "1 jobs".
#include <gpusched/counted.hpp>
#include <gpusched/exit_status.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(Counted, OneIsSingularEveryOtherCountPlural)
{
    EXPECT_EQ(counted(1, "job"), "1 job");
    EXPECT_EQ(counted(0, "job"), "0 jobs");
    EXPECT_EQ(counted(2, "GPU"), "2 GPUs");
    EXPECT_EQ(counted(1, "process", "processes"), "1 process");
    EXPECT_EQ(counted(3, "process", "processes"), "3 processes");
}

TEST(ExitStatus, NoCountOfFailedJobsIsTheStatusOfAUsageOrSystemError)
{
    EXPECT_EQ(k_exit_usage, 255);
    EXPECT_EQ(k_exit_fatal, 255);
    EXPECT_EQ(exit_status_for_failures(0), 0);
    EXPECT_EQ(exit_status_for_failures(2), 2);
    EXPECT_EQ(exit_status_for_failures(100), 100);
    for (const std::size_t failed : {101UL, 255UL, 256UL, 511UL, 100000UL}) {
        EXPECT_EQ(exit_status_for_failures(failed), k_exit_too_many_failures) << failed;
    }
    for (std::size_t failed = 0; failed < 100000; ++failed) {
        ASSERT_NE(exit_status_for_failures(failed), k_exit_usage) << failed;
    }
}

} // namespace
} // namespace gpusched
