#include <gpusched/gpu_usage.hpp>
#include <gpusched/scheduler.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

constexpr std::uint64_t k_mib = 1024 * 1024;

TEST(BusyRule, ForeignProcessesMakeAGpuBusy)
{
    const BusyRule rule;
    const GpuUsage usage{500 * k_mib, 80000 * k_mib, {{4242, 0}, {77, 0}}};
    const auto reason = rule.busy_reason(usage, {4242}, false);
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(*reason, "1 compute process not started by gpusched (pid 4242)");
    EXPECT_FALSE(rule.busy_reason(usage, {}, false).has_value()) << "our own processes are fine";
}

TEST(BusyRule, MemoryCountsOnlyWhileNoJobOfOursRunsThere)
{
    const BusyRule rule{1000};
    const GpuUsage usage{1500 * k_mib, 80000 * k_mib, {}};
    const auto reason = rule.busy_reason(usage, {}, false);
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(*reason, "1500 MiB of memory in use, more than --max-used-mib 1000");
    EXPECT_FALSE(rule.busy_reason(usage, {}, true).has_value());
    EXPECT_FALSE(rule.busy_reason(GpuUsage{900 * k_mib, 0, {}}, {}, false).has_value());
    EXPECT_FALSE(BusyRule{}.busy_reason(usage, {}, false).has_value()) << "no limit, no check";
}

TEST(UsageText, RoundTrips)
{
    UsageReport report;
    report.gpus["0"] = GpuUsage{1, 2, {{3, 0}, {4, 1 << 30}}};
    report.gpus["0"].utilization_percent = 0;
    report.gpus["0"].temperature_celsius = 71;
    report.gpus["GPU-x"] = GpuUsage{5, 6, {}};
    const auto back = parse_usage(format_usage(report));
    EXPECT_TRUE(back.problem.empty());
    ASSERT_EQ(back.gpus.size(), 2u);
    EXPECT_EQ(back.gpus.at("0").utilization_percent, 0u) << "zero is known, not unknown";
    EXPECT_EQ(back.gpus.at("0").temperature_celsius, 71u);
    EXPECT_FALSE(back.gpus.at("GPU-x").utilization_percent.has_value());
    EXPECT_FALSE(back.gpus.at("GPU-x").temperature_celsius.has_value());
    EXPECT_EQ(back.gpus.at("0").processes, (std::vector<ComputeProcess>{{3, 0}, {4, 1 << 30}}));
    EXPECT_FALSE(parse_usage("0\t1\t2\t3\t-\t-\n").problem.empty()) << "a pid without its memory";
    EXPECT_EQ(back.gpus.at("GPU-x").total_memory, 6u);
    EXPECT_EQ(parse_usage("error: NVML is unavailable\n").problem, "NVML is unavailable");
    EXPECT_FALSE(parse_usage("0\tx\t1\t\t-\t-\n").problem.empty());
    EXPECT_FALSE(parse_usage("0\t1\t1\t\t50%\t-\n").problem.empty());
    EXPECT_FALSE(parse_usage("0\t1\t1\t\n").problem.empty()) << "a field short";
}

TEST(SkipBusy, AnUnusableGpuGetsNoJobUntilItIsFreeAgain)
{
    SchedulerOptions options;
    Scheduler scheduler(GpuPool({"0", "1"}), options);
    scheduler.on_gpu_usable(0, false);
    const auto first = scheduler.on_command(Command{1, "a", 1, {}, false, {}});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(std::get<StartJob>(first[0]).gpus, GpuSlots{1});
    EXPECT_TRUE(scheduler.on_command(Command{2, "b", 1, {}, false, {}}).empty());
    const auto freed = scheduler.on_gpu_usable(0, true);
    ASSERT_EQ(freed.size(), 1u);
    EXPECT_EQ(std::get<StartJob>(freed[0]).gpus, GpuSlots{0});
}

} // namespace
} // namespace gpusched
