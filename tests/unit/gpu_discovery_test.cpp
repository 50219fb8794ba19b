#include <gpusched/gpu_discovery.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

// Stands in for the CUDA probe on machines without a GPU.
class FakeProbe final : public GpuProbe {
public:
    explicit FakeProbe(DeviceCount answer) : m_answer(std::move(answer)) {}
    DeviceCount count_devices() override
    {
        ++calls;
        return m_answer;
    }
    int calls = 0;

private:
    DeviceCount m_answer;
};

using Ids = std::vector<std::string>;

TEST(GpuDiscovery, GpusOptionWinsAndSkipsTheProbe)
{
    FakeProbe probe({8, {}});
    auto ids = resolve_gpu_ids({"1,2"}, std::string("5"), probe);
    EXPECT_EQ(std::get<Ids>(ids), (Ids{"1", "2"}));
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, VisibleDevicesAreThePoolAsWritten)
{
    FakeProbe probe({8, {}});
    auto ids = resolve_gpu_ids({}, std::string("6,GPU-x,2"), probe);
    EXPECT_EQ(std::get<Ids>(ids), (Ids{"6", "GPU-x", "2"}));
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, EmptyVisibleDevicesIsAnError)
{
    FakeProbe probe({8, {}});
    auto ids = resolve_gpu_ids({}, std::string(""), probe);
    ASSERT_TRUE(std::holds_alternative<ParseError>(ids));
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, ProbedCountBecomesIndices)
{
    FakeProbe probe({3, {}});
    auto ids = resolve_gpu_ids({}, std::nullopt, probe);
    EXPECT_EQ(std::get<Ids>(ids), (Ids{"0", "1", "2"}));
    EXPECT_EQ(probe.calls, 1);
}

TEST(GpuDiscovery, NoGpuSaysHowToPassGpus)
{
    FakeProbe probe({0, "this gpusched was built without CUDA"});
    auto ids = resolve_gpu_ids({}, std::nullopt, probe);
    ASSERT_TRUE(std::holds_alternative<ParseError>(ids));
    const auto& message = std::get<ParseError>(ids).message;
    EXPECT_NE(message.find("built without CUDA"), std::string::npos) << message;
    EXPECT_NE(message.find("--gpus"), std::string::npos) << message;
}

} // namespace
} // namespace gpusched
