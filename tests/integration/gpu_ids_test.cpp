// What is not a GPU id is refused before anything runs or is made, wherever it comes from:
// CUDA would see no device in it, and a CUDA program falls back to the CPU without a word.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <nlohmann/json.hpp>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class GpuIds : public ::testing::Test {
protected:
    std::string locks() const { return (m_dir / "locks").string(); }
    std::string ran() const { return (m_dir / "ran").string(); }
    std::string touch_ran() const { return "touch " + ran() + "\n"; }

    // The options of a run of `args` whose job, if it ran, would leave a file behind.
    LaunchOptions run_of(std::vector<std::string> args,
                         std::map<std::string, std::optional<std::string>> env = {}) const
    {
        args.insert(args.begin(), {"--lock-dir", locks()});
        return {std::move(args), touch_ran(), std::nullopt, std::move(env)};
    }

    // `gpusched exec ARGS...`; its command should be `touch ran()` where it is refused.
    LaunchOptions exec_of(const std::vector<std::string>& args,
                          std::map<std::string, std::optional<std::string>> env = {}) const
    {
        std::vector<std::string> all = {"exec", "--lock-dir", locks()};
        all.insert(all.end(), args.begin(), args.end());
        return {std::move(all), std::nullopt, std::nullopt, std::move(env)};
    }

    // Refused as a usage error, with `message`; no job ran and no lock file was made.
    void expect_refused(LaunchOptions options, const std::string& message)
    {
        const auto result = run(m_dir, std::move(options), 20s);
        EXPECT_FALSE(result.timed_out);
        EXPECT_EQ(result.exit_status, 255) << result.err;
        EXPECT_NE(result.err.find("gpusched: error: "), std::string::npos) << result.err;
        EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
        EXPECT_FALSE(fs::exists(ran())) << "the job ran";
        EXPECT_TRUE(!fs::exists(locks()) || fs::is_empty(locks())) << "a lock file was made";
    }

    std::string exec_output(const std::vector<std::string>& args)
    {
        const auto result = run(m_dir, exec_of(args));
        EXPECT_EQ(result.exit_status, 0) << result.err;
        return result.out;
    }

    TempDir m_dir;
};

constexpr const char* k_ids = "(a number, a range such as 0-3, or a GPU-/MIG- UUID)";

TEST_F(GpuIds, ASingleDashBeforeGpusIsCaughtAndExplained)
{
    write_file(m_dir / "cmds", touch_ran());
    auto options = run_of({"-gpus", "0", (m_dir / "cmds").string()});
    options.stdin_data.reset();
    expect_refused(options, std::string("'pus' in '--gpus pus' is not a GPU id ") + k_ids +
                                "; -gpus is read as -g pus: did you mean --gpus?");
}

TEST_F(GpuIds, MalformedIdsAreNamed)
{
    expect_refused(run_of({"--gpus", "0-"}),
                   std::string("'0-' in '--gpus 0-' is not a GPU id ") + k_ids);
    expect_refused(run_of({"--gpus", "0", "1-"}), "'1-' in '--gpus 1-' is not a GPU id");
    expect_refused(run_of({"--gpus", "0,-1"}), "'-1' in '--gpus 0,-1' is not a GPU id");
    expect_refused(run_of({"--gpus", "0x1"}), "'0x1' in '--gpus 0x1' is not a GPU id");
    expect_refused(run_of({"--gpus", "GPU-"}), "'GPU-' in '--gpus GPU-' is not a GPU id");
    expect_refused(run_of({"--gpus", "GPU-8e6g"}), "'GPU-8e6g' in '--gpus GPU-8e6g' is not");
    expect_refused(run_of({"--gpus", "3-1"}), "bad GPU range '3-1'");
    expect_refused(run_of({"--gpus", "4294967296"}),
                   "GPU index '4294967296' in '--gpus 4294967296' "
                   "is larger than 65535");
}

TEST_F(GpuIds, UuidsAndTheirPrefixesAreTaken)
{
    const auto result = run(m_dir, run_of({"--gpus", "GPU-8e6b",
                                           "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-"
                                           "0123456789ab/1/0"}));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(fs::exists(ran()));
}

TEST_F(GpuIds, ABadIdMakesNoFifo)
{
    const auto fifo = m_dir / "queue";
    expect_refused(run_of({"--gpus", "pus", "--fifo", fifo.string()}), "'pus' in '--gpus pus'");
    EXPECT_FALSE(fs::exists(fifo));
}

TEST_F(GpuIds, BadVisibleDevicesAreNamed)
{
    const std::map<std::string, std::optional<std::string>> env = {
        {"CUDA_VISIBLE_DEVICES", "0,pus"}};
    const std::string message = "'pus' in 'CUDA_VISIBLE_DEVICES=0,pus' is not a GPU id";
    expect_refused(run_of({}, env), message);
    expect_refused(exec_of({"--", "touch", ran()}, env), message);
    expect_refused(run_of({}, {{"CUDA_VISIBLE_DEVICES", "0-3"}}), "CUDA reads no ranges");
}

TEST_F(GpuIds, BadGpuschedGpusIsNamed)
{
    expect_refused(run_of({}, {{"GPUSCHED_GPUS", "0,gpu1"}}),
                   "'gpu1' in 'GPUSCHED_GPUS=0,gpu1' is not a GPU id");
}

// Every command that takes GPU ids takes them from GPUSCHED_GPUS as a run does, and names
// the variable when an id in it is bad.
TEST_F(GpuIds, EveryCommandTakesGpuschedGpus)
{
    // Refused first: no lock file may be made by them, and the runs below make some.
    const std::map<std::string, std::optional<std::string>> bad{{"GPUSCHED_GPUS", "0,x"}};
    const auto named = "'x' in 'GPUSCHED_GPUS=0,x' is not a GPU id";
    expect_refused(LaunchOptions{{"gpus"}, std::nullopt, std::nullopt, bad}, named);
    expect_refused(
        LaunchOptions{{"status", "--lock-dir", locks()}, std::nullopt, std::nullopt, bad}, named);
    expect_refused(exec_of({"touch", ran()}, bad), named);

    const std::map<std::string, std::optional<std::string>> two{{"GPUSCHED_GPUS", "2,3"}};
    const auto gpus = run(m_dir, {{"gpus", "--json"}, std::nullopt, std::nullopt, two}, 30s);
    ASSERT_EQ(gpus.exit_status, 0) << gpus.err;
    const auto listed = json_field(gpus.out, "gpus");
    ASSERT_TRUE(listed.is_array()) << gpus.out;
    ASSERT_EQ(listed.size(), 2u) << gpus.out;
    EXPECT_EQ(listed[0]["id"], "2");
    EXPECT_EQ(listed[1]["id"], "3");

    const auto status = run(
        m_dir, {{"status", "--lock-dir", locks(), "--json"}, std::nullopt, std::nullopt, two}, 30s);
    ASSERT_EQ(status.exit_status, 0) << status.err;
    const auto shown = json_field(status.out, "gpus");
    ASSERT_TRUE(shown.is_array()) << status.out;
    ASSERT_EQ(shown.size(), 2u) << status.out;
    EXPECT_EQ(shown[0]["id"], "2");
    EXPECT_EQ(shown[1]["id"], "3");

    const auto exec =
        run(m_dir, exec_of({"-n", "2", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"}, two));
    EXPECT_EQ(exec.exit_status, 0) << exec.err;
    EXPECT_EQ(exec.out, "2,3\n");
}

TEST_F(GpuIds, StatusAndGpusRefuseBadIds)
{
    expect_refused(LaunchOptions{{"status", "--lock-dir", locks(), "--gpus", "pus"}},
                   "is not a GPU id");
    expect_refused(LaunchOptions{{"gpus", "--gpus", "0-"}}, "'0-' in '--gpus 0-' is not a GPU id");
}

TEST_F(GpuIds, ExecIdsEndWhereTheCommandStarts)
{
    EXPECT_EQ(exec_output({"--gpus", "0", "echo", "hello"}), "hello\n");
    EXPECT_EQ(exec_output({"--gpus", "0", "--", "echo", "hi"}), "hi\n");
    EXPECT_EQ(exec_output({"--gpus=1", "echo", "hello"}), "hello\n");
    EXPECT_EQ(exec_output({"-g1", "echo", "hello"}), "hello\n");
    EXPECT_EQ(exec_output({"-qg", "1", "echo", "hello"}), "hello\n");
    const std::string visible = "echo $CUDA_VISIBLE_DEVICES";
    EXPECT_EQ(exec_output({"--gpus", "2", "sh", "-c", visible}), "2\n")
        << "-c is the command's, not an option of exec";
    EXPECT_EQ(exec_output({"-n", "3", "--gpus", "0", "1-2", "sh", "-c", visible}), "0,1,2\n");
    EXPECT_EQ(exec_output({"--gpus", "0", "1", "-n", "2", "--", "sh", "-c", visible}), "0,1\n");
    EXPECT_EQ(exec_output({"--gpus", "GPU-8e6b", "echo", "--gpus", "7"}), "--gpus 7\n");
}

TEST_F(GpuIds, ExecRefusesBadIds)
{
    expect_refused(exec_of({"-gpus", "0", "touch", ran()}), "did you mean --gpus?");
    expect_refused(exec_of({"--gpus", "0", "0-", "touch", ran()}), "'0-' in '--gpus 0-'");
    expect_refused(exec_of({"--gpus", "GPU-zz", "--", "touch", ran()}),
                   "'GPU-zz' in '--gpus GPU-zz' is not a GPU id");
    expect_refused(exec_of({"--gpus", "touch", ran()}), "'touch' in '--gpus touch'");
}

// On a machine with no NVIDIA driver the runtime says the driver is "insufficient", which sends
// people to upgrade one they do not have: the error says no driver is installed, which library
// is missing, and how to name GPU ids by hand.
TEST(NoDriver, TheErrorSaysSoAndHowToNameGpus)
{
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL); driver != nullptr) {
        dlclose(driver);
        GTEST_SKIP() << "an NVIDIA driver is installed here";
    }
    TempDir dir;
    if (run(dir, {{"--version"}}).out.find("CUDA support: yes") == std::string::npos) {
        GTEST_SKIP() << "built without CUDA: GPUs are always named by hand";
    }
    LaunchOptions options{{}, "true\n"};
    options.env["GPUSCHED_GPUS"] = std::nullopt;
    options.env["CUDA_VISIBLE_DEVICES"] = std::nullopt;
    const auto result = run(dir, options);
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("no NVIDIA driver is installed here"), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("libcuda.so.1"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("--gpus 0,1"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("insufficient"), std::string::npos) << result.err;
}

} // namespace
} // namespace gpusched::testing
