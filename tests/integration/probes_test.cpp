// The probe children with a driver that hangs: signals act at once, no probe outlives
// gpusched, and a run is not held up. The hang is a fake driver library (fakes/hung_driver.cpp)
// that the probe loads through LD_LIBRARY_PATH in place of libcuda.so.1 or libnvidia-ml.so.1.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <fstream>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

const fs::path k_hung_drivers = GPUSCHED_HUNG_DRIVERS;
// Far longer than any test waits: a run that waits for it fails its test.
const std::string k_long_probe_timeout = "600";

bool built_with_cuda()
{
    TempDir dir;
    return run(dir, {{"--version"}}).out.find("CUDA support: yes") != std::string::npos;
}

class HungProbe : public ::testing::Test {
protected:
    void SetUp() override { adopt_orphans(); }

    // Whatever a failing test left hanging is killed; only probes, as the pids are ours to
    // read but their numbers may be reused.
    void TearDown() override
    {
        for (const pid_t pid : noted_pids()) {
            std::ifstream cmdline(fmt::format("/proc/{}/cmdline", pid));
            const std::string command((std::istreambuf_iterator<char>(cmdline)), {});
            if (process_alive(pid) && command.find("__probe") != std::string::npos) {
                kill(pid, SIGKILL);
            }
        }
        leftover_processes(); // reaps what came back to us
    }

    // gpusched ARGS with `library` (cuda or nvidia-ml) hanging as it loads.
    LaunchOptions hung(const std::string& library, std::vector<std::string> args,
                       const std::string& input = "") const
    {
        return {std::move(args),
                input,
                {},
                {{"LD_LIBRARY_PATH", (k_hung_drivers / ("hung-" + library)).string()},
                 {"HUNG_DRIVER_PIDS", (m_dir / "probe-pids").string()},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"GPUSCHED_GPUS", std::nullopt}}};
    }

    std::vector<pid_t> noted_pids() const
    {
        std::vector<pid_t> pids;
        for (const auto& line : split_lines(read_file(m_dir / "probe-pids"))) {
            pids.push_back(std::stoi(line));
        }
        return pids;
    }

    // The probe, once it hangs in the driver.
    pid_t hanging_probe() const
    {
        EXPECT_TRUE(eventually([&] { return !noted_pids().empty(); })) << "no probe started";
        const auto pids = noted_pids();
        return pids.empty() ? -1 : pids.front();
    }

    TempDir m_dir;
};

TEST_F(HungProbe, EachStopSignalEndsEveryCommandAtOnceAndKillsTheCudaProbe)
{
    if (!built_with_cuda()) {
        GTEST_SKIP() << "built without CUDA: the CUDA probe loads no driver";
    }
    const std::vector<std::pair<std::vector<std::string>, int>> cases = {
        {{"--probe-timeout", k_long_probe_timeout}, SIGINT},
        {{"exec", "--probe-timeout", k_long_probe_timeout, "--", "true"}, SIGTERM},
        {{"gpus", "--probe-timeout", k_long_probe_timeout}, SIGHUP},
        {{"status", "--probe-timeout", k_long_probe_timeout}, SIGINT},
    };
    for (const auto& [args, signal] : cases) {
        SCOPED_TRACE(args.front());
        std::filesystem::remove(m_dir / "probe-pids");
        Process gpusched(m_dir, hung("cuda", args, "true\n"));
        const pid_t probe = hanging_probe();
        ASSERT_GT(probe, 0);
        EXPECT_EQ(getpgid(probe), probe) << "the probe leads a process group of its own";
        gpusched.signal(signal);
        const auto result = gpusched.wait(15s);
        EXPECT_FALSE(result.timed_out) << "waited for the probe";
        EXPECT_EQ(result.exit_status, 128 + signal) << result.err;
        EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 5s)) << "the probe lives on";
    }
}

TEST_F(HungProbe, TheCudaProbeDiesWithAKilledGpusched)
{
    if (!built_with_cuda()) {
        GTEST_SKIP() << "built without CUDA: the CUDA probe loads no driver";
    }
    Process gpusched(m_dir, hung("cuda", {"--probe-timeout", k_long_probe_timeout}, "true\n"));
    const pid_t probe = hanging_probe();
    ASSERT_GT(probe, 0);
    gpusched.signal(SIGKILL);
    gpusched.wait();
    EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 10s))
        << "the probe outlived gpusched";
}

TEST_F(HungProbe, SigtermStopsASkipBusyRunWhoseFirstLookHangs)
{
    const auto ran = m_dir / "ran";
    Process gpusched(m_dir, hung("nvidia-ml",
                                 {"--gpus", "0,1", "--skip-busy", "--no-lock", "--probe-timeout",
                                  k_long_probe_timeout},
                                 fmt::format("touch {}\n", ran.string())));
    const pid_t probe = hanging_probe();
    ASSERT_GT(probe, 0);
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(15s);
    EXPECT_FALSE(result.timed_out) << "the run waited for the usage probe";
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    EXPECT_FALSE(fs::exists(ran)) << "a job started before any GPU was known to be free";
    EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 5s)) << "the probe lives on";
}

TEST_F(HungProbe, TheUsageProbeDiesWithAKilledGpusched)
{
    Process gpusched(m_dir, hung("nvidia-ml",
                                 {"--gpus", "0", "--skip-busy", "--no-lock", "--probe-timeout",
                                  k_long_probe_timeout},
                                 "true\n"));
    const pid_t probe = hanging_probe();
    ASSERT_GT(probe, 0);
    gpusched.signal(SIGKILL);
    gpusched.wait();
    EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 10s))
        << "the probe outlived gpusched";
}

TEST_F(HungProbe, AUsageLookPastItsTimeoutIsKilledAndEveryGpuIsUsed)
{
    const auto ran = m_dir / "ran";
    const auto result =
        run(m_dir,
            hung("nvidia-ml", {"--gpus", "0,1", "--skip-busy", "--no-lock", "--probe-timeout", "1"},
                 fmt::format("echo $CUDA_VISIBLE_DEVICES >> {0}\n"
                             "echo $CUDA_VISIBLE_DEVICES >> {0}\n",
                             ran.string())));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(split_lines(read_file(ran)).size(), 2U);
    EXPECT_NE(result.err.find("did not answer within 1000 ms"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("every GPU is used"), std::string::npos) << result.err;
    for (const pid_t probe : noted_pids()) {
        EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 5s)) << "the probe lives on";
    }
}

} // namespace
} // namespace gpusched::testing
