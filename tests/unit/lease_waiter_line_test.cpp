#include <gpusched/lease_names.hpp>
#include <gpusched/lease_waiter_line.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(LeaseWaiterLine, ReadsBackWhatWasWritten)
{
    const WaiterLine line{"gpusched-lease/0123456789abcdef/GPU-8e6b", 1763712000.25, 3600.5, 2, 3};
    const auto text = format_waiter_line(line);
    ASSERT_EQ(text.back(), '\n');
    const auto read = parse_waiter_line(text.substr(0, text.size() - 1));
    ASSERT_TRUE(read);
    EXPECT_EQ(read->lease, line.lease);
    EXPECT_DOUBLE_EQ(read->since, line.since);
    EXPECT_DOUBLE_EQ(read->used, line.used);
    EXPECT_DOUBLE_EQ(read->weight, 2);
    EXPECT_EQ(read->gpus, 3u);
}

TEST(LeaseWaiterLine, WhatIsNotALineOfAWaiterIsNone)
{
    for (const char* text : {"", "hello", "gpusched-waiter 2 x 1 1 1 1", "gpusched-waiter 1 x 1 1 1",
                             "gpusched-waiter 1 x nan 1 1 1", "gpusched-waiter 1 x 1 inf 1 1",
                             "gpusched-waiter 1 x 1 1 0 1", "gpusched-waiter 1 x 1 -5 1 1",
                             "gpusched-waiter 1 x 1 1 1 0", "gpusched-waiter 1 x 1 1 -1 1",
                             "gpusched-waiter 1 x 1 1 1e9 1", "gpusched-waiter 1 x 1 1 0.001 1"}) {
        EXPECT_FALSE(parse_waiter_line(text)) << text;
    }
}

TEST(LeaseWaiterLine, TheGpuGoesToAWaiterWhoseShareIsNotAhead)
{
    const WaiterLine newcomer{"x", 0, 0, 1, 1};
    EXPECT_TRUE(owed_the_gpu(newcomer, 100, 1)); // an exec, or a run that just came
    const WaiterLine busy{"x", 0, 300, 1, 1};
    EXPECT_FALSE(owed_the_gpu(busy, 100, 1));
    EXPECT_TRUE(owed_the_gpu(busy, 300, 1)); // even: the waiter's turn
    const WaiterLine heavy{"x", 0, 300, 2, 1}; // --share 2: 300 s count as 150
    EXPECT_TRUE(owed_the_gpu(heavy, 200, 1));
    EXPECT_FALSE(owed_the_gpu(busy, 200, 1));
}

TEST(LeaseWaitName, ReadsBackWhatWasWritten)
{
    const auto space = lease_space("/tmp/locks");
    const auto name = lease_wait_name(space, {4711, 1763712000, 2});
    EXPECT_TRUE(name.starts_with(lease_wait_prefix(space)));
    const auto read = parse_lease_wait_name(space, name);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->pid, 4711);
    EXPECT_EQ(read->since, 1763712000);
    EXPECT_EQ(read->gpus, 2u);
    EXPECT_FALSE(lease_key_of_socket_name(space, name)) << "a wait is not a GPU's lease";
    EXPECT_FALSE(parse_lease_wait_name(space, lease_socket_name(space, "0")));
    EXPECT_FALSE(parse_lease_wait_name(space, lease_wait_prefix(space) + "12/x/2"));
    EXPECT_FALSE(parse_lease_wait_name(lease_space("/other"), name));
}

} // namespace
} // namespace gpusched
