// Checks that need a real NVIDIA GPU; each is skipped (and reported as skipped by ctest)
// on machines without one. Run them on a GPU machine with: ctest -L gpu
#include "../integration/harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

namespace gpusched::testing {
namespace {

// The output of a shell command, or nothing if it could not run.
std::string output_of(const std::string& command)
{
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) {
        return {};
    }
    std::string output;
    std::array<char, 4096> chunk{};
    while (const auto got = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) {
        output.append(chunk.data(), got);
    }
    return output;
}

// GPUs as nvidia-smi numbers them (PCI bus order); 0 when there is no usable driver.
int nvidia_smi_gpu_count()
{
    if (!fs::exists("/dev/nvidiactl")) {
        return 0;
    }
    std::istringstream lines(output_of("nvidia-smi -L 2>/dev/null"));
    int count = 0;
    std::string line;
    while (std::getline(lines, line)) {
        count += line.rfind("GPU ", 0) == 0 ? 1 : 0;
    }
    return count;
}

class Gpu : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_gpus = nvidia_smi_gpu_count();
        if (m_gpus == 0) {
            GTEST_SKIP() << "no NVIDIA GPU on this machine";
        }
    }
    int m_gpus = 0;
};

TEST_F(Gpu, DiscoveryFindsEveryGpuThatNvidiaSmiLists)
{
    TempDir dir;
    std::string commands;
    for (int i = 0; i < 2 * m_gpus; ++i) {
        commands +=
            fmt::format("echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\" >> {}; sleep 0.2\n",
                        (dir / "seen").string());
    }
    const auto result =
        run(dir, {{}, commands, std::nullopt, {{"CUDA_VISIBLE_DEVICES", std::nullopt}}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::set<std::string> seen;
    std::istringstream lines(read_file(dir / "seen"));
    std::string line;
    while (std::getline(lines, line)) {
        seen.insert(line);
    }
    std::set<std::string> expected;
    for (int i = 0; i < m_gpus; ++i) {
        expected.insert(fmt::format("{} PCI_BUS_ID", i));
    }
    EXPECT_EQ(seen, expected);
}

TEST_F(Gpu, UuidsAndTheGpusCommandMatchNvidiaSmi)
{
    TempDir dir;
    const auto uuids = split_lines(output_of("nvidia-smi --query-gpu=uuid --format=csv,noheader"));
    ASSERT_EQ(uuids.size(), static_cast<std::size_t>(m_gpus));
    std::string commands;
    for (int i = 0; i < m_gpus; ++i) {
        commands += fmt::format("echo \"$CUDA_VISIBLE_DEVICES\" >> {}; sleep 0.2\n",
                                (dir / "seen").string());
    }
    const auto result =
        run(dir, {{"--uuid"}, commands, std::nullopt, {{"CUDA_VISIBLE_DEVICES", std::nullopt}}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    auto seen = split_lines(read_file(dir / "seen"));
    std::sort(seen.begin(), seen.end());
    auto expected = uuids;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(seen, expected);
    const auto listed = run(
        dir,
        {{"gpus", "--json"}, std::nullopt, std::nullopt, {{"CUDA_VISIBLE_DEVICES", std::nullopt}}});
    ASSERT_EQ(listed.exit_status, 0) << listed.err;
    for (const auto& uuid : uuids) {
        EXPECT_NE(listed.out.find(uuid), std::string::npos) << listed.out;
    }
    EXPECT_EQ(listed.out.find("\"processes\": null"), std::string::npos) << "NVML answered";
}

TEST_F(Gpu, EachJobSeesExactlyTheGpuItWasGiven)
{
    TempDir dir;
    // gpusched's own CUDA probe is the CUDA program: it prints every device it can see.
    std::string commands;
    for (int i = 0; i < m_gpus; ++i) {
        commands += fmt::format(
            "{} __probe-cuda > {}/seen-$GPUSCHED_JOB_ID; echo \"$CUDA_VISIBLE_DEVICES\" > "
            "{}/given-$GPUSCHED_JOB_ID\n",
            binary().string(), dir.path().string(), dir.path().string());
    }
    const auto result =
        run(dir, {{"--uuid"}, commands, std::nullopt, {{"CUDA_VISIBLE_DEVICES", std::nullopt}}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    for (int job = 1; job <= m_gpus; ++job) {
        const auto seen = split_lines(read_file(dir / fmt::format("seen-{}", job)));
        const auto given = split_lines(read_file(dir / fmt::format("given-{}", job)));
        ASSERT_EQ(seen.size(), 1u) << "job " << job << " sees " << seen.size() << " devices";
        ASSERT_EQ(given.size(), 1u);
        EXPECT_NE(seen[0].find("\t" + given[0] + "\t"), std::string::npos)
            << seen[0] << " vs " << given[0];
    }
}

TEST_F(Gpu, TheSchedulerHoldsNoGpuDeviceFile)
{
    TempDir dir;
    Process gpusched(dir, {{},
                           "touch " + (dir / "started").string() + "; sleep 2\n",
                           std::nullopt,
                           {{"CUDA_VISIBLE_DEVICES", std::nullopt}}});
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "started"); }));
    std::vector<std::string> device_files;
    for (const auto& entry : fs::directory_iterator(fmt::format("/proc/{}/fd", gpusched.pid()))) {
        std::error_code error;
        const auto target = fs::read_symlink(entry.path(), error).string();
        if (target.rfind("/dev/nvidia", 0) == 0) {
            device_files.push_back(target);
        }
    }
    EXPECT_TRUE(device_files.empty()) << "gpusched itself opened " << device_files.front();
    const auto maps = read_file(fmt::format("/proc/{}/maps", gpusched.pid()));
    EXPECT_EQ(maps.find("libcuda"), std::string::npos)
        << "the CUDA driver is loaded in the scheduler";
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

} // namespace
} // namespace gpusched::testing
