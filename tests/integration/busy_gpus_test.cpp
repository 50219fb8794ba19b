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

// A usage probe for GPUs that are not there: GPU "0" runs a process of someone else (pid 1,
// which no job descends from) for the first `busy_looks` looks; every other GPU is idle. It
// counts its looks in DIR/looks.
sys::ProbeCommand fake_usage(const TempDir& dir, int busy_looks)
{
    const auto script = fmt::format(
        "looks=$(cat {0} 2>/dev/null || echo 0); echo $((looks + 1)) > {0}; "
        "for id; do pids=; if [ \"$id\" = 0 ] && [ $looks -lt {1} ]; then pids=1:0; fi; "
        "printf '%s\\t0\\t1\\t%s\\t-\\t-\\n' \"$id\" \"$pids\"; done",
        (dir / "looks").string(), busy_looks);
    return {"/bin/sh", {"sh", "-c", script, "fake-usage"}, 30s};
}

int looks(const TempDir& dir)
{
    return std::stoi(read_file(dir / "looks"));
}

// Runs the commands in `input` on `gpus` with --skip-busy backed by `usage`.
int run_with_usage(const TempDir& dir, const std::vector<std::string>& gpus,
                   const std::string& input, sys::ProbeCommand usage,
                   std::chrono::milliseconds recheck)
{
    write_file(dir / "input", input);
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE};
    sys::InputReader reader({(dir / "input").string()}, std::nullopt);
    Scheduler scheduler(GpuPool(gpus), SchedulerOptions{});
    const JobEnvironment environment(environ);
    const sys::JobSpawner spawner("/bin/sh");
    sys::RunnerOptions options;
    options.usage_probe = std::move(usage);
    options.busy_rule = BusyRule{};
    options.recheck = recheck;
    sys::SystemProcessTable processes(spawner);
    LocalLauncher launcher(processes);
    const SystemTime clock;
    sys::RunnerRequests no_requests;
    sys::JobEndSink no_ends;
    sys::JobRunner runner(scheduler, reader, no_requests, no_ends,
                          {processes, launcher, signals, clock}, environment, std::move(options));
    return runner.run();
}

std::string record(const TempDir& dir)
{
    return fmt::format("echo \"$CUDA_VISIBLE_DEVICES\" >> {}\n", (dir / "gpus").string());
}

TEST(SkipBusy, ABusyGpuGetsNoJob)
{
    TempDir dir;
    const auto status = run_with_usage(dir, {"0", "1"}, record(dir) + record(dir) + record(dir),
                                       fake_usage(dir, 1000), 10s);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(split_lines(read_file(dir / "gpus")), (std::vector<std::string>{"1", "1", "1"}));
}

TEST(SkipBusy, AWaitingJobTakesTheGpuOnceARecheckFindsItFree)
{
    TempDir dir;
    const auto status = run_with_usage(dir, {"0"}, record(dir), fake_usage(dir, 3), 50ms);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(read_file(dir / "gpus"), "0\n");
    EXPECT_EQ(looks(dir), 4)
        << "looked again every --recheck while the job waited, and then no more";
}

TEST(SkipBusy, NoLookWhileNothingWaits)
{
    TempDir dir;
    // GPU 0 stays busy, but GPU 1 takes every job at once: nothing waits, nothing is rechecked.
    const auto status = run_with_usage(dir, {"0", "1"}, "sleep 0.3\n", fake_usage(dir, 1000), 10ms);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(looks(dir), 1);
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
