// What a job leaves running after its shell ends: it keeps the job's GPU from the next job,
// --timeout and stops reach it, and the end of a run waits for it and names it.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <string>

namespace gpusched::testing {
namespace {

// The lines of DIR/order, in the order the jobs wrote them.
std::vector<std::string> order(const TempDir& dir)
{
    return split_lines(read_file(dir / "order"));
}

pid_t noted_pid(const fs::path& file)
{
    return std::stoi(read_file(file));
}

TEST(Leftovers, ABackgroundProcessKeepsItsGpuFromTheNextJob)
{
    TempDir dir;
    const auto order_file = (dir / "order").string();
    const auto result =
        run(dir, {{"--gpus", "0", "--no-lock"},
                  join_lines({fmt::format("(sleep 2; echo background-ended >> {0}) & "
                                          "echo first >> {0}",
                                          order_file),
                              fmt::format("echo second >> {}", order_file)})});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(order(dir), (std::vector<std::string>{"first", "background-ended", "second"}))
        << "job 2 started on GPU 0 while job 1's background process still ran\n"
        << result.err;
    EXPECT_TRUE(has(result.err, "job 1 left pid ")) << result.err;
    EXPECT_TRUE(has(result.err, "running on GPU 0")) << result.err;
    EXPECT_TRUE(has(result.err, "GPU 0 is free again: what job 1 left behind has ended"))
        << result.err;
}

TEST(Leftovers, WhatClosedItsDescriptorsButStayedInTheGroupStillHoldsTheGpu)
{
    TempDir dir;
    const auto order_file = (dir / "order").string();
    const auto result = run(
        dir, {{"--gpus", "0", "--no-lock"},
              join_lines({fmt::format("sh -c 'exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; sleep 1; "
                                      "echo background-ended >> {0}' & echo first >> {0}",
                                      order_file),
                          fmt::format("echo second >> {}", order_file)})});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(order(dir), (std::vector<std::string>{"first", "background-ended", "second"}))
        << result.err;
}

TEST(Leftovers, AJobThatFillsItsTokenDoesNotHang)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "0", "--no-lock"}, "head -c 200000 /dev/zero >&4; echo done\n"},
            std::chrono::seconds(30));
    ASSERT_FALSE(result.timed_out) << result.err;
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "done\n");
}

TEST(Leftovers, TimeoutStopsASetsidChildThatIgnoresTerm)
{
    TempDir dir;
    const auto pid_file = dir / "pid";
    const auto order_file = (dir / "order").string();
    const auto result = run(
        dir,
        {{"--gpus", "0", "--no-lock", "--timeout", "1", "--kill-after", "1"},
         join_lines({fmt::format("setsid sh -c 'trap \"\" TERM; echo $$ > {}; exec sleep 300' & "
                                 "sleep 300",
                                 pid_file.string()),
                     fmt::format("echo second >> {}", order_file)})},
        std::chrono::seconds(60));
    ASSERT_FALSE(result.timed_out) << result.err;
    const pid_t child = noted_pid(pid_file);
    EXPECT_FALSE(process_alive(child)) << "the setsid child outlived --timeout\n" << result.err;
    EXPECT_EQ(order(dir), std::vector<std::string>{"second"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_TRUE(has(result.err, "passed --timeout")) << result.err;
}

TEST(Leftovers, TheEndOfARunWaitsForLeftoversAndNamesThem)
{
    TempDir dir;
    const auto pid_file = dir / "pid";
    const auto result = run(dir, {{"--gpus", "0", "--no-lock"},
                                  // The shell outlives the fork a moment, so that the child
                                  // has become sleep when it is named.
                                  fmt::format("sleep 1 & echo $! > {}; sleep 0.2\n",
                                              pid_file.string())});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_FALSE(process_alive(noted_pid(pid_file))) << "gpusched ended before its job's sleep";
    EXPECT_TRUE(has(result.err, "waiting for what job 1 left running on GPU 0: pid "))
        << result.err;
    EXPECT_TRUE(has(result.err, "(sleep)")) << result.err;
}

TEST(Leftovers, OneSignalStopsLeftoversThatIgnoreIt)
{
    TempDir dir;
    const auto pid_file = dir / "pid";
    Process gpusched(dir,
                     {{"--gpus", "0", "--no-lock", "--kill-after", "1"},
                      fmt::format("setsid sh -c 'trap \"\" TERM; echo $$ > {}; exec sleep 300' &\n",
                                  pid_file.string())});
    ASSERT_TRUE(eventually([&] { return has(gpusched.err_so_far(), "waiting for what job 1"); }));
    gpusched.signal(SIGINT);
    const auto stopped = gpusched.wait(std::chrono::seconds(30));
    ASSERT_FALSE(stopped.timed_out) << stopped.err;
    EXPECT_EQ(stopped.exit_status, 128 + SIGINT) << stopped.err;
    EXPECT_FALSE(process_alive(noted_pid(pid_file))) << stopped.err;
}

} // namespace
} // namespace gpusched::testing
