#include <gpusched/gpu_history.hpp>

#include <gtest/gtest.h>

using namespace gpusched;

namespace {

HeldJob job(std::string gpu, long pid, double since)
{
    return {std::move(gpu), pid, since, "ann", "python train.py"};
}

} // namespace

TEST(GpuHistory, AJobNoLongerSeenEndedAtTheLookThatMissedIt)
{
    GpuHistory history(3600);
    history.observe(100, {job("0", 7, 90)});
    history.observe(101, {job("0", 7, 90)});
    ASSERT_EQ(history.spans(0).size(), 1u);
    EXPECT_EQ(history.spans(0)[0].end, 0) << "still running";
    history.observe(102, {});
    const auto spans = history.spans(0);
    ASSERT_EQ(spans.size(), 1u);
    EXPECT_EQ(spans[0].job.since, 90) << "its start is the record's, before the first look";
    EXPECT_EQ(spans[0].end, 102);
}

TEST(GpuHistory, AProcessOnTwoGpusIsTwoSpansAndANewStartIsANewSpan)
{
    GpuHistory history(3600);
    history.observe(100, {job("0", 7, 90), job("1", 7, 90)});
    history.observe(110, {job("0", 7, 105)}); // the same pid again, a later job
    const auto spans = history.spans(0);
    ASSERT_EQ(spans.size(), 3u);
    EXPECT_EQ(spans[0].end, 110);
    EXPECT_EQ(spans[1].end, 110);
    EXPECT_EQ(spans[2].job.since, 105);
    EXPECT_EQ(spans[2].end, 0);
}

TEST(GpuHistory, WhatEndedLongerAgoThanItKeepsIsForgotten)
{
    GpuHistory history(60);
    history.observe(100, {job("0", 7, 90)});
    history.observe(110, {});
    history.observe_utilization(110, "0", 40);
    EXPECT_EQ(history.spans(0).size(), 1u);
    history.observe(200, {});
    history.observe_utilization(200, "0", 50);
    EXPECT_TRUE(history.spans(0).empty());
    const auto samples = history.utilization("0", 0);
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].percent, 50u);
    EXPECT_TRUE(history.utilization("1", 0).empty());
}

TEST(GpuHistory, SpansAreThoseThatOverlapTheWindow)
{
    GpuHistory history(3600);
    history.observe(100, {job("0", 7, 90)});
    history.observe(110, {job("0", 8, 110)});
    EXPECT_EQ(history.spans(111).size(), 1u) << "the ended one is before the window";
    EXPECT_EQ(history.spans(105).size(), 2u);
}
