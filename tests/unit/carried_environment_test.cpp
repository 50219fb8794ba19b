#include <gpusched/carried_environment.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

using Variables = std::vector<std::string>;

const Variables k_environment = {"HOME=/home/ann", "WANDB_API_KEY=secret", "WANDB_PROJECT=p",
                                 "PATH=/usr/bin", "A=1"};

TEST(CarriedEnvironment, TheWholeEnvironmentIsCarriedWhereItIsPrivate)
{
    EXPECT_EQ(carried_environment(k_environment, {{}, true}), k_environment);
}

TEST(CarriedEnvironment, ValuesSetOverTheWholeReplaceTheirNamesOnce)
{
    EXPECT_EQ(carried_environment(k_environment, {{"A=2", "NEW=x", "A=3"}, true}),
              (Variables{"HOME=/home/ann", "WANDB_API_KEY=secret", "WANDB_PROJECT=p",
                         "PATH=/usr/bin", "NEW=x", "A=3"}));
}

TEST(CarriedEnvironment, OnlyWhatIsNamedIsCarriedOtherwise)
{
    EXPECT_TRUE(carried_environment(k_environment, {{}, false}).empty());
    EXPECT_EQ(carried_environment(k_environment, {{"PATH", "MISSING"}, false}),
              Variables{"PATH=/usr/bin"});
    EXPECT_EQ(carried_environment(k_environment, {{"WANDB_*", "A=7"}, false}),
              (Variables{"WANDB_API_KEY=secret", "WANDB_PROJECT=p", "A=7"}));
    // A name is whole: PATH does not pick PATHEXT, nor A pick AB.
    EXPECT_EQ(carried_environment({"AB=1", "A=2"}, {{"A"}, false}), Variables{"A=2"});
}

TEST(CarriedEnvironment, AnEntryIsANameAPrefixOrAnAssignment)
{
    for (const auto* good : {"PATH", "_X1", "WANDB_*", "A=", "A=b=c", "A=  spaced"}) {
        EXPECT_EQ(environment_entry_error(good), "") << good;
    }
    for (const auto* bad : {"", "*", "1A", "A-B", "=x", "A*B", "A B", "A*=1"}) {
        EXPECT_NE(environment_entry_error(bad), "") << bad;
    }
}

} // namespace
} // namespace gpusched
