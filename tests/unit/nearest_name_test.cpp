// The suggestion after an unknown option or subcommand: the name that was most likely meant.
#include <gpusched/nearest_name.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

const std::vector<std::string> k_options = {
    "--gpus", "--joblog", "--jobs-per-gpu", "--gpus-per-job", "--timeout", "--tag", "-g", "-q"};
const std::vector<std::string> k_commands = {"exec",  "status", "submit", "worker",
                                             "queue", "report", "gpus",   "hypersearch"};

TEST(NearestName, ASlipFindsTheName)
{
    EXPECT_EQ(nearest_name("--gpu", k_options), "--gpus");
    EXPECT_EQ(nearest_name("--job-log", k_options), "--joblog");
    EXPECT_EQ(nearest_name("--timeuot", k_options), "--timeout") << "two letters swapped";
    EXPECT_EQ(nearest_name("staus", k_commands), "status");
    EXPECT_EQ(nearest_name("sumbit", k_commands), "submit");
    EXPECT_EQ(nearest_name("hypersaerch", k_commands), "hypersearch");
}

TEST(NearestName, AnAbbreviationOfOneNameFindsIt)
{
    EXPECT_EQ(nearest_name("--gpus-per", k_options), "--gpus-per-job");
    EXPECT_EQ(nearest_name("--jo", k_options), std::nullopt) << "two names start so";
}

TEST(NearestName, NothingCloseSuggestsNothing)
{
    EXPECT_EQ(nearest_name("--frobnicate", k_options), std::nullopt);
    EXPECT_EQ(nearest_name("-x", k_options), std::nullopt);
    EXPECT_EQ(nearest_name("commands.txt", k_commands), std::nullopt);
    EXPECT_EQ(nearest_name("xyz", k_commands), std::nullopt);
}

TEST(NearestName, EditDistanceCountsEachSlipOnce)
{
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    EXPECT_EQ(edit_distance("abc", "abc"), 0u);
    EXPECT_EQ(edit_distance("abc", "acb"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

} // namespace
} // namespace gpusched
