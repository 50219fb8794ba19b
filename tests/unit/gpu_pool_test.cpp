#include <gpusched/gpu_pool.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace gpusched {
namespace {

TEST(GpuPool, HandsOutEveryGpuOnce)
{
    GpuPool pool({"a", "b", "c"});
    EXPECT_EQ(pool.acquire(), GpuSlot{0});
    EXPECT_EQ(pool.acquire(), GpuSlot{1});
    EXPECT_EQ(pool.acquire(), GpuSlot{2});
    EXPECT_FALSE(pool.acquire().has_value());
    EXPECT_EQ(pool.free_count(), 0u);
}

TEST(GpuPool, FreedGpusGoToTheBackOfTheLine)
{
    GpuPool pool({"a", "b", "c"});
    const auto first = pool.acquire();
    pool.release(*first);
    // First-in first-out: b and c have been free longer than a.
    EXPECT_EQ(pool.id(*pool.acquire()), "b");
    EXPECT_EQ(pool.id(*pool.acquire()), "c");
    EXPECT_EQ(pool.id(*pool.acquire()), "a");
}

TEST(GpuPool, ReleasingAFreeGpuIsRefused)
{
    GpuPool pool({"a", "b"});
    EXPECT_THROW(pool.release(0), std::logic_error);
    const auto slot = pool.acquire();
    pool.release(*slot);
    EXPECT_THROW(pool.release(*slot), std::logic_error);
    EXPECT_EQ(pool.free_count(), 2u);
}

TEST(GpuPool, NeedsAtLeastOneGpu)
{
    EXPECT_THROW(GpuPool({}), std::invalid_argument);
}

} // namespace
} // namespace gpusched
