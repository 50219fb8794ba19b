#include <gpusched/gpu_pool.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace gpusched {
namespace {

GpuSlot one(GpuPool& pool, const GpuSlots& avoid = {})
{
    const auto slots = pool.acquire(1, avoid);
    EXPECT_TRUE(slots.has_value());
    return slots ? slots->front() : GpuSlot{999};
}

TEST(GpuPool, HandsOutEveryGpuOnce)
{
    GpuPool pool({"a", "b", "c"});
    EXPECT_EQ(one(pool), GpuSlot{0});
    EXPECT_EQ(one(pool), GpuSlot{1});
    EXPECT_EQ(one(pool), GpuSlot{2});
    EXPECT_FALSE(pool.acquire().has_value());
}

TEST(GpuPool, FreedGpusGoToTheBackOfTheLine)
{
    GpuPool pool({"a", "b", "c"});
    pool.release({one(pool)});
    // First-in first-out: b and c have been free longer than a.
    EXPECT_EQ(pool.id(one(pool)), "b");
    EXPECT_EQ(pool.id(one(pool)), "c");
    EXPECT_EQ(pool.id(one(pool)), "a");
}

TEST(GpuPool, ReleasingAnIdleGpuIsRefused)
{
    GpuPool pool({"a", "b"});
    EXPECT_THROW(pool.release({0}), std::logic_error);
    const auto slot = one(pool);
    pool.release({slot});
    EXPECT_THROW(pool.release({slot}), std::logic_error);
    EXPECT_EQ(pool.load(slot), 0u);
}

TEST(GpuPool, NeedsAtLeastOneGpuAndOneJobPerGpu)
{
    EXPECT_THROW(GpuPool({}), std::invalid_argument);
    EXPECT_THROW(GpuPool({"a"}, 0), std::invalid_argument);
}

TEST(GpuPool, SeveralJobsPerGpuGoToTheLeastLoaded)
{
    GpuPool pool({"a", "b"}, 2);
    EXPECT_EQ(one(pool), GpuSlot{0});
    EXPECT_EQ(one(pool), GpuSlot{1}) << "b is idle, a already has a job";
    EXPECT_EQ(one(pool), GpuSlot{0});
    EXPECT_EQ(one(pool), GpuSlot{1});
    EXPECT_FALSE(pool.acquire().has_value());
    pool.release({1});
    EXPECT_EQ(one(pool), GpuSlot{1});
    pool.release({0});
    pool.release({0});
    pool.release({1});
    EXPECT_EQ(pool.load(0), 0u);
    EXPECT_EQ(pool.load(1), 1u);
    EXPECT_EQ(one(pool), GpuSlot{0}) << "the least loaded GPU";
}

TEST(GpuPool, SeveralGpusPerJobAreDistinctAndAllOrNothing)
{
    GpuPool pool({"a", "b", "c"});
    const auto pair = pool.acquire(2);
    ASSERT_TRUE(pair.has_value());
    EXPECT_EQ(*pair, (GpuSlots{0, 1}));
    EXPECT_EQ(pool.ids_of(*pair), "a,b");
    EXPECT_FALSE(pool.acquire(2).has_value()) << "one GPU left, and it is not taken";
    EXPECT_EQ(pool.load(2), 0u);
    pool.release(*pair);
    EXPECT_EQ(*pool.acquire(3), (GpuSlots{2, 0, 1}));
}

TEST(GpuPool, AvoidsTheGpusAJobFailedOnWhenOthersWillDo)
{
    GpuPool pool({"a", "b", "c"});
    EXPECT_EQ(one(pool, {0}), GpuSlot{1});
    EXPECT_EQ(one(pool, {0, 2}), GpuSlot{0}) << "only a is free: it is used";
}

TEST(GpuPool, BusyOrLeasedElsewhereGpusGetNoJob)
{
    GpuPool pool({"a", "b", "c"});
    pool.set_usable(0, false);
    pool.set_leased_elsewhere(1, true);
    EXPECT_EQ(one(pool), GpuSlot{2});
    EXPECT_FALSE(pool.acquire().has_value());
    pool.set_leased_elsewhere(1, false);
    EXPECT_EQ(one(pool), GpuSlot{1});
    EXPECT_FALSE(pool.usable(0)) << "the two reasons are kept apart";
}

TEST(GpuPool, RoomForCountsTheJobsThatCouldStartOneAfterAnother)
{
    GpuPool pool({"a", "b", "c"}, 2);
    EXPECT_EQ(pool.room_for(1), 6u);
    EXPECT_EQ(pool.room_for(2), 3u) << "a+b, c+a, b+c";
    EXPECT_EQ(pool.room_for(3), 2u);
    EXPECT_EQ(pool.room_for(4), 0u) << "more GPUs than the pool has";
    ASSERT_TRUE(pool.acquire(1).has_value());
    pool.set_paused(1, true);
    EXPECT_EQ(pool.room_for(1), 3u) << "one left on the used GPU, none on the paused one";
    EXPECT_EQ(pool.room_for(2), 1u) << "a and c, once: a has room for one more";
    pool.set_leased_elsewhere(2, true);
    EXPECT_EQ(pool.room_for(1), 1u);
    EXPECT_EQ(pool.room_for(2), 0u);
}

} // namespace
} // namespace gpusched
