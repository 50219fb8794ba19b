// GPU discovery, busy GPUs and leases against a fake driver: libcuda.so.1 and libnvidia-ml.so.1
// built from the public C interfaces (fakes/fake_cuda.cpp, fakes/fake_nvml.cpp) and loaded by
// the real probe children through LD_LIBRARY_PATH, as the driver's would be. The fake machine
// has two GPUs whose driver enumeration order is not their PCI order, so every index below is
// checked to be nvidia-smi's.
#include "fake_driver_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(FakeOldDriver, GpusListsThemThroughTheDriverApiInPciOrder)
{
    const auto gpus = listed_gpus();
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 2) << gpus.dump();
    EXPECT_EQ(gpus[0]["id"], "0");
    EXPECT_EQ(gpus[0]["uuid"], k_first_uuid);
    EXPECT_EQ(gpus[0]["name"], "Fake H100 80GB HBM3");
    EXPECT_EQ(gpus[0]["memory_total_mib"], 81559);
    EXPECT_EQ(gpus[0]["memory_used_mib"], 1000) << "NVML's GPU 0 is the driver API's GPU 0";
    EXPECT_EQ(gpus[0]["found_by"], "CUDA driver API");
    EXPECT_EQ(gpus[1]["uuid"], k_second_uuid);
    EXPECT_EQ(gpus[1]["memory_used_mib"], 0);

    const auto table = run(m_dir, on_fake({"gpus"}));
    EXPECT_EQ(table.exit_status, 0) << table.err;
    EXPECT_NE(table.out.find(k_first_uuid), std::string::npos) << table.out;
    EXPECT_NE(table.err.find("GPUs listed through the CUDA driver API"), std::string::npos)
        << table.err;
}

TEST_F(FakeOldDriver, AnotherDeviceOrderTheUserChoseIsKeptAsTheRuntimeWouldKeepIt)
{
    auto options = on_fake({"gpus", "--json"});
    options.env["CUDA_DEVICE_ORDER"] = "FASTEST_FIRST";
    const auto result = run(m_dir, options);
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto gpus = json_field(result.out, "gpus");
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 2) << result.out;
    EXPECT_EQ(gpus[0]["uuid"], k_second_uuid) << "the driver's own first GPU";
    EXPECT_EQ(gpus[1]["uuid"], k_first_uuid);
}

TEST_F(FakeOldDriver, WhereTheDriverApiFailsTooNvmlListsTheSameGpus)
{
    machine(k_old_driver + "fail cuInit\n");
    const auto gpus = listed_gpus();
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 2) << gpus.dump();
    EXPECT_EQ(gpus[0]["uuid"], k_first_uuid);
    EXPECT_EQ(gpus[1]["uuid"], k_second_uuid);
    EXPECT_EQ(gpus[0]["found_by"], "NVML");
}

TEST_F(FakeOldDriver, EveryWayFailingIsAnErrorThatNamesEach)
{
    machine(k_old_driver + "fail cuInit\nfail nvmlInit_v2\n");
    const auto result = run(m_dir, on_fake({}, "true\n"));
    EXPECT_EQ(result.exit_status, 255) << result.err;
    for (const auto* why : {"CUDA driver version is insufficient", "cuInit", "nvmlInit"}) {
        EXPECT_NE(result.err.find(why), std::string::npos) << why << " in: " << result.err;
    }
}

TEST_F(FakeOldDriver, ARunWithoutGpusUsesEachAndTheLogSaysHowTheyWereFound)
{
    const auto result = run(m_dir, on_fake({"-v", "--no-lock"}, note_gpus() + note_gpus()));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto gpus = seen();
    std::sort(gpus.begin(), gpus.end());
    EXPECT_EQ(gpus, (std::vector<std::string>{"0", "1"}));
    EXPECT_NE(result.err.find("2 GPUs listed through the CUDA driver API"), std::string::npos)
        << result.err;
}

TEST_F(FakeOldDriver, UuidGivesJobsTheUuidsOfNvidiaSmisIndices)
{
    const auto one = run(m_dir, on_fake({"--uuid", "--gpus", "0", "--no-lock"}, note_gpus()));
    EXPECT_EQ(one.exit_status, 0) << one.err;
    EXPECT_EQ(seen(), std::vector<std::string>{k_first_uuid});

    fs::remove(m_dir / "seen");
    const auto every = run(m_dir, on_fake({"--uuid", "--no-lock"}, note_gpus() + note_gpus()));
    EXPECT_EQ(every.exit_status, 0) << every.err;
    auto gpus = seen();
    std::sort(gpus.begin(), gpus.end());
    EXPECT_EQ(gpus, (std::vector<std::string>{k_first_uuid, k_second_uuid}));
}

TEST_F(FakeOldDriver, GpuZeroGivenAndGpuZeroFoundAreOneLease)
{
    const auto go = m_dir / "go";
    const auto started = m_dir / "started";
    Process holder(m_dir,
                   on_fake({"exec", "--gpus", "0", "--", "sh", "-c",
                            fmt::format("touch {}; while [ ! -e {} ]; do sleep 0.05; done",
                                        started.string(), go.string())}));
    ASSERT_TRUE(eventually([&] { return fs::exists(started); })) << holder.err_so_far();
    TempDir other;
    // Both GPUs as found, so GPU 0 among them; then GPU 0 by its UUID.
    for (const auto& args : {std::vector<std::string>{"exec", "-n", "2", "--no-wait", "--", "true"},
                             std::vector<std::string>{"exec", "--gpus", k_first_uuid, "--no-wait",
                                                      "--", "true"}}) {
        SCOPED_TRACE(args[1]);
        const auto refused = run(other, on_fake(args));
        EXPECT_EQ(refused.exit_status, 75) << refused.err;
    }
    write_file(go, "");
    EXPECT_EQ(holder.wait().exit_status, 0);
}

TEST_F(FakeOldDriver, AHungDriverIsKilledAtTheProbeTimeoutAndSigtermActsAtOnce)
{
    machine(k_old_driver + "hang cuInit\n");
    const auto timed_out = run(m_dir, on_fake({"gpus", "--probe-timeout", "1"}));
    EXPECT_NE(timed_out.err.find("did not answer within 1000 ms"), std::string::npos)
        << timed_out.err;

    fs::remove(m_dir / "hung-pids");
    Process gpusched(m_dir, on_fake({"--probe-timeout", "600"}, "true\n"));
    ASSERT_TRUE(eventually([&] { return !read_file(m_dir / "hung-pids").empty(); }))
        << "the probe never reached cuInit";
    const pid_t probe = std::stoi(split_lines(read_file(m_dir / "hung-pids")).front());
    gpusched.signal(SIGTERM);
    const auto stopped = gpusched.wait(15s);
    EXPECT_FALSE(stopped.timed_out) << "waited for the hung probe";
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    EXPECT_TRUE(eventually([&] { return !process_alive(probe); }, 5s)) << "the probe lives on";
}

class FakeBusyGpu : public FakeDriver {
protected:
    // GPU 0 is busy on `busy_machine`: the first job goes to GPU 1 and holds it until the
    // second has run; the second waits until a recheck finds GPU 0 free on `free_machine`.
    void skipped_then_used(const std::string& busy_machine, const std::string& free_machine,
                           std::vector<std::string> args, const std::string& why)
    {
        machine(busy_machine);
        const auto go = m_dir / "go";
        const std::string holding = fmt::format(
            "echo $CUDA_VISIBLE_DEVICES >> {}; while [ ! -e {} ]; do sleep 0.05; done\n",
            (m_dir / "seen").string(), go.string());
        args.insert(args.end(), {"--gpus", "0,1", "--skip-busy", "--recheck", "0.1", "--no-lock"});
        Process gpusched(m_dir, on_fake(args, holding + note_gpus()));
        ASSERT_TRUE(eventually([&] { return seen().size() == 1; })) << gpusched.err_so_far();
        EXPECT_EQ(seen(), std::vector<std::string>{"1"}) << "the busy GPU 0 got a job";
        EXPECT_NE(gpusched.err_so_far().find(why), std::string::npos) << gpusched.err_so_far();
        machine(free_machine);
        EXPECT_TRUE(eventually([&] { return seen().size() == 2; })) << gpusched.err_so_far();
        write_file(go, "");
        const auto result = gpusched.wait();
        EXPECT_EQ(result.exit_status, 0) << result.err;
        EXPECT_EQ(seen(), (std::vector<std::string>{"1", "0"}));
    }
};

TEST_F(FakeBusyGpu, AGpuWithAProcessGpuschedDidNotStartIsSkippedThenUsedOnceFree)
{
    // This test's own process computes on GPU 0: alive, and no descendant of gpusched.
    skipped_then_used(
        k_gpus + fmt::format("process {} {}\n", k_line_of_gpu_0, getpid()), k_gpus, {},
        fmt::format("1 compute process not started by gpusched (pid {})", getpid()));
}

TEST_F(FakeBusyGpu, AGpuWithMoreMemoryUsedThanMaxUsedMibIsSkippedThenUsedOnceFree)
{
    // GPU 0 has 1000 MiB in use.
    std::string freed = k_gpus;
    freed.replace(freed.find(" 1000 "), 6, " 100 ");
    skipped_then_used(k_gpus, freed, {"--max-used-mib", "500"}, "more than --max-used-mib 500");
}

TEST_F(FakeBusyGpu, GpusShowsTheForeignProcessWithItsCommand)
{
    // And one whose command cannot be read (gone, or of another PID namespace): null.
    constexpr int k_gone = 4'194'000;
    machine(k_gpus +
            fmt::format("process {0} {1}\nprocess {0} {2}\n", k_line_of_gpu_0, getpid(), k_gone));
    const auto result = run(m_dir, on_fake({"gpus", "--gpus", "0,1", "--json"}));
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto gpus = json_field(result.out, "gpus");
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 2) << result.out;
    ASSERT_EQ(gpus[0]["processes"].size(), 2U) << result.out;
    EXPECT_EQ(gpus[0]["processes"][0]["pid"], getpid());
    EXPECT_TRUE(gpus[0]["processes"][0]["command"].is_string()) << result.out;
    EXPECT_EQ(gpus[0]["processes"][1]["pid"], k_gone);
    EXPECT_TRUE(gpus[0]["processes"][1]["command"].is_null()) << result.out;
    EXPECT_EQ(gpus[0]["memory_used_mib"], 1000);
    EXPECT_EQ(gpus[1]["processes"].size(), 0U) << result.out;
}

TEST_F(FakeBusyGpu, GpusShowsUtilisationAndTemperatureWhereTheDriverTellsThem)
{
    machine(k_gpus + fmt::format("busy {} 37 64\n", k_line_of_gpu_0));
    const auto result = run(m_dir, on_fake({"gpus", "--gpus", "0,1", "--json"}));
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto gpus = json_field(result.out, "gpus");
    ASSERT_TRUE(gpus.is_array() && gpus.size() == 2) << result.out;
    EXPECT_EQ(gpus[0]["utilization_percent"], 37) << result.out;
    EXPECT_EQ(gpus[0]["temperature_celsius"], 64);
    EXPECT_TRUE(gpus[1]["utilization_percent"].is_null()) << "not supported is unknown, not 0";
    EXPECT_TRUE(gpus[1]["temperature_celsius"].is_null());
}

} // namespace
} // namespace gpusched::testing
