#include <gpusched/index_permutation.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace gpusched {
namespace {

TEST(IndexPermutation, IsABijectionForEverySmallSize)
{
    for (std::uint64_t size = 1; size <= 300; ++size) {
        const IndexPermutation permutation(size, 12345);
        std::vector<bool> hit(size, false);
        for (std::uint64_t i = 0; i < size; ++i) {
            const auto value = permutation(i);
            ASSERT_LT(value, size);
            ASSERT_FALSE(hit[value]) << "size " << size << " maps two indices to " << value;
            hit[value] = true;
        }
    }
}

TEST(IndexPermutation, SameSeedSameOrderOtherSeedOtherOrder)
{
    const IndexPermutation a(1000, 1);
    const IndexPermutation b(1000, 1);
    const IndexPermutation c(1000, 2);
    int same_as_other_seed = 0;
    int fixed_points = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        EXPECT_EQ(a(i), b(i));
        same_as_other_seed += a(i) == c(i) ? 1 : 0;
        fixed_points += a(i) == i ? 1 : 0;
    }
    EXPECT_LT(same_as_other_seed, 20);
    EXPECT_LT(fixed_points, 20) << "the order is shuffled";
}

TEST(IndexPermutation, HugeSpacesInConstantMemory)
{
    const std::uint64_t size = 1'000'000'000'000ULL;
    const IndexPermutation permutation(size, 99);
    std::vector<std::uint64_t> first;
    for (std::uint64_t i = 0; i < 10; ++i) {
        first.push_back(permutation(i));
        EXPECT_LT(first.back(), size);
    }
    std::sort(first.begin(), first.end());
    EXPECT_EQ(std::unique(first.begin(), first.end()), first.end());
}

TEST(IndexPermutation, LargestSize)
{
    const IndexPermutation permutation(~std::uint64_t{0}, 5);
    EXPECT_LT(permutation(0), ~std::uint64_t{0});
}

} // namespace
} // namespace gpusched
