// The rule both stores' workers follow when their store fails: said once when a spell begins
// and once when it ends, tried again after a back-off that doubles to a ceiling and that only
// the end resets. Time is passed in.
#include <gpusched/queue/failure_spell.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace gpusched::queue {
namespace {

using namespace std::chrono_literals;
using Clock = FailureSpell::Clock;

TEST(FailureSpell, IsSaidOnceWhenItBeginsAndOnceWhenItEnds)
{
    FailureSpell spell(100ms, 5s);
    const Clock::time_point start{};
    EXPECT_FALSE(spell.ended(start)) << "nothing to say: nothing failed";
    EXPECT_TRUE(spell.failed(start, "heartbeat"));
    EXPECT_FALSE(spell.failed(start + 1s, "take")) << "still the same spell";
    EXPECT_EQ(spell.what(), "heartbeat") << "what failed first";
    EXPECT_TRUE(spell.failing());
    EXPECT_EQ(spell.ended(start + 3s), 3s);
    EXPECT_FALSE(spell.failing());
    EXPECT_FALSE(spell.ended(start + 4s));
    EXPECT_TRUE(spell.failed(start + 5s, "take")) << "a new spell is said again";
}

TEST(FailureSpell, BacksOffDoublingToTheLongestAndTheEndStartsAgain)
{
    FailureSpell spell(100ms, 500ms);
    Clock::time_point now{};
    std::vector<Clock::duration> waits;
    for (int i = 0; i < 5; ++i) {
        spell.failed(now, "connection");
        waits.push_back(*spell.retry_at() - now);
        now = *spell.retry_at();
        spell.retrying();
    }
    EXPECT_EQ(waits, (std::vector<Clock::duration>{100ms, 200ms, 400ms, 500ms, 500ms}));
    spell.ended(now);
    EXPECT_FALSE(spell.retry_at()) << "nothing to retry once it works";
    spell.failed(now, "connection");
    EXPECT_EQ(*spell.retry_at() - now, 100ms);
}

TEST(FailureSpell, AFailureWhileATryIsDueDoesNotPutItOff)
{
    FailureSpell spell(1s, 1s);
    const Clock::time_point start{};
    spell.failed(start, "recording results");
    spell.failed(start + 600ms, "reading cancels and pauses");
    EXPECT_EQ(*spell.retry_at(), start + 1s);
}

} // namespace
} // namespace gpusched::queue
