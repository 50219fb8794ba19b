// Bad command lines fail with a message and exit status 2, before anything runs.
#include "harness.hpp"

#include <gtest/gtest.h>

namespace gpusched::testing {
namespace {

void expect_usage_error(const std::vector<std::string>& args, const std::string& message,
                        std::map<std::string, std::optional<std::string>> env = {})
{
    TempDir dir;
    const auto result = run(dir, {args, "true\n", std::nullopt, std::move(env)});
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
}

TEST(Usage, DuplicateGpu)
{
    expect_usage_error({"--gpus", "0", "1", "0"}, "GPU '0' is listed twice");
}

TEST(Usage, EmptyGpuEntry)
{
    expect_usage_error({"--gpus", "0,"}, "empty GPU id in '--gpus 0,'");
}

TEST(Usage, GpusWithoutValue)
{
    expect_usage_error({"--gpus"}, "--gpus");
}

TEST(Usage, EmptyVisibleDevices)
{
    expect_usage_error({}, "CUDA_VISIBLE_DEVICES is set but empty", {{"CUDA_VISIBLE_DEVICES", ""}});
}

TEST(Usage, NoGpuSaysHowToPassGpus)
{
    if (fs::exists("/dev/nvidiactl")) {
        GTEST_SKIP() << "this machine has an NVIDIA driver; discovery is checked by the gpu tests";
    }
    expect_usage_error({}, "name the GPUs to use with --gpus",
                       {{"CUDA_VISIBLE_DEVICES", std::nullopt}});
}

TEST(Usage, UnknownOption)
{
    expect_usage_error({"--gpus", "0", "--frobnicate"}, "frobnicate");
}

TEST(Usage, RelativeShell)
{
    expect_usage_error({"--gpus", "0", "--shell", "sh"}, "--shell sh");
}

TEST(Usage, NegativeKillAfter)
{
    expect_usage_error({"--gpus", "0", "--kill-after", "-1"}, "kill-after");
}

TEST(GpusCommand, ListsThePoolAsJsonAndSaysWhatIsUnknown)
{
    TempDir dir;
    const auto result = run(dir, {{"gpus", "--gpus", "0,GPU-8e6b", "--json"}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.out.find("\"id\": \"0\""), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("\"id\": \"GPU-8e6b\""), std::string::npos) << result.out;
    if (!fs::exists("/dev/nvidiactl")) {
        EXPECT_NE(result.out.find("\"processes\": null"), std::string::npos) << result.out;
        EXPECT_NE(result.err.find("memory use and processes unknown"), std::string::npos)
            << result.err;
    }
    const auto table = run(dir, {{"gpus", "--gpus", "3"}});
    EXPECT_EQ(table.exit_status, 0);
    EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
}

TEST(Usage, HelpAndVersionSucceed)
{
    TempDir dir;
    const auto help = run(dir, {{"--help"}});
    EXPECT_EQ(help.exit_status, 0);
    EXPECT_NE(help.out.find("--gpus"), std::string::npos);
    EXPECT_EQ(help.out.find("__probe-cuda"), std::string::npos) << "the probe is internal";
    const auto version = run(dir, {{"--version"}});
    EXPECT_EQ(version.exit_status, 0);
    EXPECT_EQ(version.out.rfind("gpusched ", 0), 0u) << version.out;
}

} // namespace
} // namespace gpusched::testing
