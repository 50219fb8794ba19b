#include <gpusched/memory_estimates.hpp>

#include <gtest/gtest.h>

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

} // namespace
} // namespace gpusched
