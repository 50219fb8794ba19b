#include <gpusched/memory_estimates.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gpusched {
namespace {

TEST(MemoryEstimates, ASweepsJobsAreOneKindWhateverTheirNumbers)
{
    EXPECT_EQ(MemoryEstimates::kind_of("python train.py --lr 0.01 --seed 3"),
              "python train.py --lr # --seed #");
    EXPECT_EQ(MemoryEstimates::kind_of("python train.py --lr 1e-4 --seed 12"),
              "python train.py --lr # --seed #");
    EXPECT_EQ(MemoryEstimates::kind_of("resnet50 --epochs=10"), "resnet# --epochs=#");
    EXPECT_NE(MemoryEstimates::kind_of("python train.py --model vit"),
              MemoryEstimates::kind_of("python train.py --model mlp"));
    EXPECT_EQ(MemoryEstimates::kind_of(""), "");
}

TEST(MemoryEstimates, TheHighestPeakOfAKindWithAFifthMoreAndNothingForAnUnknownKind)
{
    MemoryEstimates estimates;
    EXPECT_EQ(estimates.estimate("train --seed 1"), std::nullopt);
    estimates.learn("train --seed 1", 1000);
    estimates.learn("train --seed 2", 2000);
    estimates.learn("train --seed 3", 1500);
    EXPECT_EQ(estimates.estimate("train --seed 9"), 2400u);
    EXPECT_EQ(estimates.estimate("evaluate --seed 9"), std::nullopt);
    estimates.learn("evaluate --seed 1", 0); // never seen to use any: nothing learnt
    EXPECT_EQ(estimates.estimate("evaluate --seed 9"), std::nullopt);
}

TEST(MemoryEstimates, TheNumbersOfACommandAreThoseItsKindMakesPlaceholders)
{
    EXPECT_EQ(MemoryEstimates::numbers_of("python train.py --lr 1e-4 --batch 64 --seed 3"),
              (std::vector<double>{1e-4, 64, 3}));
    EXPECT_EQ(MemoryEstimates::numbers_of("resnet50 --epochs=10"), (std::vector<double>{50, 10}));
    EXPECT_EQ(MemoryEstimates::numbers_of("run 1e999"), (std::vector<double>{0}));
    EXPECT_TRUE(MemoryEstimates::numbers_of("no numbers").empty());
}

// A batch size whose peaks lie on a line: each job is estimated by its own batch size, a fifth
// more; beyond the sizes seen never less than the nearest one used.
TEST(MemoryEstimates, ANumberThatExplainsThePeaksEstimatesEachJobByItsValue)
{
    MemoryEstimates estimates;
    estimates.learn("train --batch 16 --seed 1", 1600);
    estimates.learn("train --batch 48 --seed 2", 4800);
    estimates.learn("train --batch 32 --seed 3", 3200);
    // Three sizes are not yet enough to trust a line: the highest peak.
    EXPECT_EQ(estimates.estimate("train --batch 24 --seed 9"), 5760u);
    estimates.learn("train --batch 64 --seed 4", 6400);
    EXPECT_EQ(estimates.estimate("train --batch 24 --seed 9"), 2880u);
    EXPECT_EQ(estimates.estimate("train --batch 128 --seed 9"), 15360u);
    EXPECT_EQ(estimates.estimate("train --batch 8 --seed 9"), 1920u) << "no less than batch 16's";
}

// Peaks off the line are covered: no job seen would have been estimated below what it used.
TEST(MemoryEstimates, APeakAboveTheLineRaisesTheEstimateOfEveryValue)
{
    MemoryEstimates estimates;
    const std::vector<std::pair<int, std::uint64_t>> seen = {
        {10, 1100}, {20, 1900}, {30, 3300}, {40, 3900}, {50, 5200}};
    for (const auto& [batch, peak] : seen) {
        estimates.learn(fmt::format("train --batch {}", batch), peak);
    }
    for (const auto& [batch, peak] : seen) {
        const auto estimate = estimates.estimate(fmt::format("train --batch {}", batch));
        ASSERT_TRUE(estimate);
        EXPECT_GE(*estimate, peak + peak / 5) << "batch " << batch;
    }
    // 1,040 on the line, and 220 more (batch 30's was that far above it), and a fifth.
    EXPECT_EQ(estimates.estimate("train --batch 10"), 1512u);
}

// A number the peaks do not follow (a seed) teaches nothing of a job's need: the highest peak.
TEST(MemoryEstimates, ANumberThePeaksDoNotFollowLeavesTheHighestPeak)
{
    MemoryEstimates estimates;
    const std::vector<std::pair<int, std::uint64_t>> seen = {{1, 3000}, {2, 1000}, {3, 4000},
                                                             {4, 1500}, {5, 3500}, {6, 2000}};
    for (const auto& [seed, peak] : seen) {
        estimates.learn(fmt::format("train --seed {}", seed), peak);
    }
    EXPECT_EQ(estimates.estimate("train --seed 2"), 4800u);
    EXPECT_EQ(estimates.estimate("train --seed 100"), 4800u);
}

// A command of many numbers is learnt from by its first ones only, and estimated all the same.
TEST(MemoryEstimates, ACommandOfManyNumbersIsLearntFromByItsFirst)
{
    MemoryEstimates estimates;
    std::string many;
    for (int i = 0; i < 100'000; ++i) {
        many += " 7";
    }
    for (int batch = 1; batch <= 4; ++batch) {
        estimates.learn(fmt::format("train --batch {}{}", batch, many), 1000u * batch);
    }
    EXPECT_EQ(estimates.estimate("train --batch 2" + many), 2400u);
    EXPECT_EQ(estimates.estimate("train --batch 3"), std::nullopt) << "another kind";
}

// Numbers too huge to sum explain nothing: the highest peak, and never an estimate of nothing.
TEST(MemoryEstimates, HugeNumbersLeaveTheHighestPeak)
{
    MemoryEstimates estimates;
    for (int i = 1; i <= 4; ++i) {
        estimates.learn(fmt::format("train --size {}e307", i * 4), 1000u * i);
    }
    EXPECT_EQ(estimates.estimate("train --size 9e307"), 4800u);
    EXPECT_EQ(estimates.estimate("train --size 1e999"), 4800u);
}

// A '#' of the command's own is one with the kind's placeholders: commands of one kind with
// fewer numbers draw no line, and are estimated all the same.
TEST(MemoryEstimates, ACommandWithAHashOfItsOwnIsNoNumber)
{
    MemoryEstimates estimates;
    for (int batch = 1; batch <= 4; ++batch) {
        estimates.learn(fmt::format("train --batch {} 7", batch), 1000u * batch);
    }
    estimates.learn("train --batch # 7", 500);
    EXPECT_EQ(estimates.estimate("train --batch # 7"), 4800u) << "no number where the line's is";
    EXPECT_EQ(estimates.estimate("train --batch 2 7"), 2400u);
}

} // namespace
} // namespace gpusched
