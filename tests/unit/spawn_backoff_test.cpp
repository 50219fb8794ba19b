#include <gpusched/spawn_backoff.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

using namespace std::chrono_literals;
const SpawnBackoff::Clock::time_point k_first_try{1h};

TEST(SpawnBackoff, TheWaitDoublesWhileTheSystemRefusesUpToTenSeconds)
{
    SpawnBackoff backoff;
    auto now = k_first_try;
    std::vector<std::chrono::milliseconds> waits;
    for (int i = 0; i < 9; ++i) {
        ASSERT_TRUE(backoff.refused(now));
        const auto retry = backoff.retry_at().value();
        waits.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(retry - now));
        EXPECT_FALSE(backoff.due(retry - 1ms));
        EXPECT_TRUE(backoff.due(retry));
        EXPECT_FALSE(backoff.due(retry)) << "due once";
        now = retry;
    }
    EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 800ms, 1600ms,
                                                             3200ms, 6400ms, 10s, 10s}));
}

TEST(SpawnBackoff, RefusalsWhileAWaitIsOnAddNone)
{
    SpawnBackoff backoff;
    EXPECT_TRUE(backoff.refused(k_first_try));
    EXPECT_FALSE(backoff.refused(k_first_try + 50ms));
    EXPECT_FALSE(backoff.refused(k_first_try + 60ms));
    EXPECT_EQ(backoff.retry_at(), k_first_try + 100ms);
    EXPECT_EQ(backoff.deferred(), 3u) << "every start put off counts";
}

TEST(SpawnBackoff, AStartEndsTheSpellAndTheNextWaitIsTheFirst)
{
    SpawnBackoff backoff;
    EXPECT_FALSE(backoff.started()) << "no spell to end";
    ASSERT_TRUE(backoff.refused(k_first_try));
    ASSERT_TRUE(backoff.due(k_first_try + 100ms));
    ASSERT_TRUE(backoff.refused(k_first_try + 100ms));
    ASSERT_TRUE(backoff.due(k_first_try + 300ms));
    EXPECT_TRUE(backoff.started());
    ASSERT_TRUE(backoff.refused(k_first_try + 1s));
    EXPECT_EQ(backoff.retry_at(), k_first_try + 1s + 100ms);
    EXPECT_EQ(backoff.deferred(), 3u);
}

} // namespace
} // namespace gpusched
