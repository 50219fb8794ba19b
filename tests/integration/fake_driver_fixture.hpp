// The fixture of the tests against a fake driver (fakes/): libcuda.so.1 and libnvidia-ml.so.1
// built from the public C interfaces and loaded by the real probe children through
// LD_LIBRARY_PATH, as the driver's would be, answering for the machine each test describes.
#pragma once

#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpusched::testing {

inline const fs::path k_fake_driver = GPUSCHED_FAKE_DRIVER;

// PCI 41:00.0 is GPU 0 for nvidia-smi, though the driver enumerates it second.
inline const std::string k_first_uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
inline const std::string k_second_uuid = "GPU-bbbbbbbb-5555-6666-7777-888888888888";
inline const std::string k_gpus =
    fmt::format("gpu {} 00000000:C1:00.0 81559 0 Fake H100 80GB HBM3\n"
                "gpu {} 00000000:41:00.0 81559 1000 Fake H100 80GB HBM3\n",
                k_second_uuid, k_first_uuid);
// A driver of the R535 series, older than the CUDA 13 runtime: the runtime refuses it.
inline const std::string k_old_driver = "driver_version 12020\n" + k_gpus;
// The position, in k_gpus, of nvidia-smi's GPU 0, for `process` lines.
inline constexpr int k_line_of_gpu_0 = 1;

inline bool built_with_cuda()
{
    TempDir dir;
    return run(dir, {{"--version"}}).out.find("CUDA support: yes") != std::string::npos;
}

class FakeDriver : public ::testing::Test {
protected:
    void SetUp() override { adopt_orphans(); }

    void machine(const std::string& description) const
    {
        // Written whole and renamed in, so that a probe never reads half of it.
        write_file(m_dir / "machine.new", description);
        fs::rename(m_dir / "machine.new", m_dir / "machine");
    }

    LaunchOptions on_fake(std::vector<std::string> args, const std::string& input = "") const
    {
        return {std::move(args),
                input,
                {},
                {{"LD_LIBRARY_PATH", k_fake_driver.string()},
                 {"GPUSCHED_FAKE_GPUS", (m_dir / "machine").string()},
                 {"GPUSCHED_FAKE_HUNG_PIDS", (m_dir / "hung-pids").string()},
                 {"GPUSCHED_LOCK_DIR", (m_dir / "leases").string()},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"GPUSCHED_GPUS", std::nullopt}}};
    }

    // A job line that appends the GPUs it was given to `seen`.
    std::string note_gpus() const
    {
        return fmt::format("echo $CUDA_VISIBLE_DEVICES >> {}\n", (m_dir / "seen").string());
    }
    std::vector<std::string> seen() const { return split_lines(read_file(m_dir / "seen")); }

    nlohmann::json listed_gpus() const
    {
        const auto result = run(m_dir, on_fake({"gpus", "--json"}));
        EXPECT_EQ(result.exit_status, 0) << result.err;
        return json_field(result.out, "gpus");
    }

    TempDir m_dir;
};

class FakeOldDriver : public FakeDriver {
protected:
    void SetUp() override
    {
        FakeDriver::SetUp();
        if (!built_with_cuda()) {
            GTEST_SKIP() << "built without CUDA: there is no runtime to fall back from";
        }
        machine(k_old_driver);
    }
};

} // namespace gpusched::testing
