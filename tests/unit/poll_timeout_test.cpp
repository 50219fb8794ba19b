#include <gpusched/sys/poll_timeout.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace gpusched::sys {
namespace {

using namespace std::chrono_literals;

TEST(PollTimeout, IsTheWaitInMillisecondsWithinWhatPollCanSay)
{
    EXPECT_EQ(poll_timeout(std::nullopt), -1) << "no limit";
    EXPECT_EQ(poll_timeout(1500ms), 1500);
    EXPECT_EQ(poll_timeout(-5ms), 0) << "a deadline passed: no wait";
    EXPECT_EQ(poll_timeout(std::chrono::hours(24 * 30)), std::numeric_limits<int>::max())
        << "30 days: poll's longest, never a negative (endless) wait";
}

} // namespace
} // namespace gpusched::sys
