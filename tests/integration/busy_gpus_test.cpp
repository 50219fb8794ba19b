// --skip-busy with the real runner and real jobs; only GPU usage is faked, as there is no GPU.
#include "harness.hpp"

#include <gpusched/job_environment.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/input_reader.hpp>
#include <gpusched/sys/job_runner.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/system_process_table.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>

extern char** environ;

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// GPU "0" runs a process of someone else (pid 1, which no job descends from) for the first
// `busy_checks` looks; every other GPU is idle.
class FakeUsage final : public UsageProbe {
public:
    explicit FakeUsage(int busy_checks, int* calls) : m_busy_checks(busy_checks), m_calls(calls) {}
    UsageReport usage(const std::vector<std::string>& ids) override
    {
        UsageReport report;
        for (const auto& id : ids) {
            report.gpus[id] = GpuUsage{0, 1, {}};
        }
        if (*m_calls < m_busy_checks) {
            report.gpus["0"].compute_pids = {1};
        }
        ++*m_calls;
        return report;
    }

private:
    int m_busy_checks;
    int* m_calls;
};

// Runs the commands in `input` on `gpus` with --skip-busy backed by `usage`.
int run_with_usage(const TempDir& dir, const std::vector<std::string>& gpus,
                   const std::string& input, std::unique_ptr<UsageProbe> usage,
                   std::chrono::milliseconds recheck)
{
    write_file(dir / "input", input);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE};
    sys::InputReader reader({(dir / "input").string()}, std::nullopt);
    Scheduler scheduler(GpuPool(gpus), SchedulerOptions{});
    const JobEnvironment environment(environ);
    const sys::JobSpawner spawner("/bin/sh", signals.original_mask());
    sys::RunnerOptions options;
    options.usage_probe = std::move(usage);
    options.recheck = recheck;
    sys::SystemProcessTable processes(spawner);
    sys::JobRunner runner(scheduler, reader, signals, processes, environment, std::move(options));
    return runner.run();
}

std::string record(const TempDir& dir)
{
    return fmt::format("echo \"$CUDA_VISIBLE_DEVICES\" >> {}\n", (dir / "gpus").string());
}

TEST(SkipBusy, ABusyGpuGetsNoJob)
{
    TempDir dir;
    int calls = 0;
    const auto status = run_with_usage(dir, {"0", "1"}, record(dir) + record(dir) + record(dir),
                                       std::make_unique<FakeUsage>(1000, &calls), 10s);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(split_lines(read_file(dir / "gpus")), (std::vector<std::string>{"1", "1", "1"}));
}

TEST(SkipBusy, AWaitingJobTakesTheGpuOnceARecheckFindsItFree)
{
    TempDir dir;
    int calls = 0;
    const auto status =
        run_with_usage(dir, {"0"}, record(dir), std::make_unique<FakeUsage>(3, &calls), 50ms);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(read_file(dir / "gpus"), "0\n");
    EXPECT_EQ(calls, 4) << "looked again every --recheck while the job waited, and then no more";
}

TEST(SkipBusy, NoLookWhileNothingWaits)
{
    TempDir dir;
    int calls = 0;
    // GPU 0 stays busy, but GPU 1 takes every job at once: nothing waits, nothing is rechecked.
    const auto status = run_with_usage(dir, {"0", "1"}, "sleep 0.3\n",
                                       std::make_unique<FakeUsage>(1000, &calls), 10ms);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(calls, 1);
}

TEST(SkipBusy, WithoutNvmlItWarnsAndUsesEveryGpu)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0", "--skip-busy"}, record(dir)});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "gpus"), "0\n");
    if (!fs::exists("/dev/nvidiactl")) {
        EXPECT_NE(
            result.err.find("--skip-busy cannot tell which GPUs are busy (NVML is unavailable"),
            std::string::npos)
            << result.err;
    }
}

} // namespace
} // namespace gpusched::testing
