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

// Two processes that each hold a GPU the other waits for (`exec -n 2`, twice at once): the one
// that began to wait first must get the other's GPU, and only it, even when both began within
// one millisecond: each side compares what the lines carry, and ties go by process id.
TEST(LeaseWaiterLine, OfTwoWaitersExactlyOneWaitedFirstAsBothSeeIt)
{
    const double a = wait_start(1'700'000'000.0004);
    const double b = wait_start(1'700'000'000.0003);
    EXPECT_EQ(a, b) << "the same millisecond";
    EXPECT_EQ(parse_waiter_line(format_waiter_line({"x", a, 0, 1, 1}))->since, a)
        << "a waiter's line carries exactly its start";
    for (const auto& [pid_a, pid_b] : {std::pair{100L, 200L}, std::pair{200L, 100L}}) {
        const bool b_hands_to_a = waited_first(a, pid_a, b, pid_b);
        const bool a_hands_to_b = waited_first(b, pid_b, a, pid_a);
        EXPECT_NE(b_hands_to_a, a_hands_to_b) << pid_a << " and " << pid_b;
    }
    const double later = wait_start(1'700'000'000.0021);
    EXPECT_TRUE(waited_first(a, 999, later, 1));
    EXPECT_FALSE(waited_first(later, 1, a, 999));
}

} // namespace
} // namespace gpusched
