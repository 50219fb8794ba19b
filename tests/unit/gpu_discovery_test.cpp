#include <gpusched/gpu_discovery.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

// Stands in for the CUDA probe on machines without a GPU.
class FakeProbe final : public GpuProbe {
public:
    explicit FakeProbe(GpuInventory answer) : m_answer(std::move(answer)) {}
    GpuInventory inventory() override
    {
        ++calls;
        return m_answer;
    }
    int calls = 0;

private:
    GpuInventory m_answer;
};

using Ids = std::vector<std::string>;

GpuInventory gpus(int count)
{
    GpuInventory inventory;
    for (int index = 0; index < count; ++index) {
        inventory.gpus.push_back(
            GpuInfo{index, "GPU-0000000" + std::to_string(index), "Fake H100", 80ULL << 30});
    }
    return inventory;
}

TEST(GpuDiscovery, GpusOptionWinsAndSkipsTheProbe)
{
    FakeProbe probe(gpus(8));
    auto ids = resolve_gpu_ids({"1,2"}, std::string("5"), probe);
    EXPECT_EQ(*ids, (Ids{"1", "2"}));
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, VisibleDevicesAreThePoolAsWritten)
{
    FakeProbe probe(gpus(8));
    auto ids = resolve_gpu_ids({}, std::string("6,GPU-8e6b,2"), probe);
    EXPECT_EQ(*ids, (Ids{"6", "GPU-8e6b", "2"}));
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, EmptyVisibleDevicesIsAnError)
{
    FakeProbe probe(gpus(8));
    auto ids = resolve_gpu_ids({}, std::string(""), probe);
    ASSERT_FALSE(ids.ok());
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, BadIdsAreRefusedBeforeTheProbeIsAsked)
{
    FakeProbe probe(gpus(8));
    auto from_option = resolve_gpu_ids({"pus", "0"}, std::nullopt, probe, true);
    ASSERT_FALSE(from_option.ok());
    EXPECT_NE(from_option.failure().message.find("'pus'"), std::string::npos);
    auto from_environment = resolve_gpu_ids({}, std::string("0,GPU-x"), probe);
    ASSERT_FALSE(from_environment.ok());
    EXPECT_NE(from_environment.failure().message.find("CUDA_VISIBLE_DEVICES=0,GPU-x"),
              std::string::npos);
    EXPECT_EQ(probe.calls, 0);
}

TEST(GpuDiscovery, GivenIdsNeedNoProbe)
{
    EXPECT_EQ(given_gpu_ids({"0-1"}, std::string("5")).value(), (Ids{"0", "1"}));
    EXPECT_EQ(given_gpu_ids({}, std::string("05")).value(), (Ids{"5"}));
    EXPECT_EQ(given_gpu_ids({}, std::nullopt).value(), std::nullopt);
    const auto named = given_gpu_ids({"0-"}, std::nullopt, "GPUSCHED_GPUS");
    ASSERT_FALSE(named.ok());
    EXPECT_NE(named.failure().message.find("'GPUSCHED_GPUS=0-'"), std::string::npos)
        << named.failure().message;
}

TEST(GpuDiscovery, ProbedGpusBecomeIndicesOrUuids)
{
    FakeProbe probe(gpus(3));
    EXPECT_EQ(resolve_gpu_ids({}, std::nullopt, probe).value(), (Ids{"0", "1", "2"}));
    EXPECT_EQ(resolve_gpu_ids({}, std::nullopt, probe, true).value(),
              (Ids{"GPU-00000000", "GPU-00000001", "GPU-00000002"}));
}

TEST(GpuDiscovery, UuidOptionMapsGivenIndices)
{
    FakeProbe probe(gpus(3));
    EXPECT_EQ(resolve_gpu_ids({"2,MIG-1f2e"}, std::nullopt, probe, true).value(),
              (Ids{"GPU-00000002", "MIG-1f2e"}));
    auto missing = resolve_gpu_ids({"5"}, std::nullopt, probe, true);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.failure().message.find("there is no GPU 5; CUDA finds 3"), std::string::npos);
}

TEST(GpuDiscovery, NoGpuSaysHowToPassGpus)
{
    FakeProbe probe(GpuInventory{{}, "this gpusched was built without CUDA"});
    auto ids = resolve_gpu_ids({}, std::nullopt, probe);
    ASSERT_FALSE(ids.ok());
    const auto& message = ids.failure().message;
    EXPECT_NE(message.find("built without CUDA"), std::string::npos) << message;
    EXPECT_NE(message.find("--gpus"), std::string::npos) << message;
}

TEST(GpuInventoryText, RoundTrips)
{
    const auto inventory = gpus(2);
    const auto back = parse_inventory(format_inventory(inventory));
    ASSERT_EQ(back.gpus.size(), 2u);
    EXPECT_EQ(back.gpus[1].uuid, "GPU-00000001");
    EXPECT_EQ(back.gpus[1].name, "Fake H100");
    EXPECT_EQ(back.gpus[1].total_memory, 80ULL << 30);
    EXPECT_TRUE(back.problem.empty());
    EXPECT_EQ(parse_inventory(format_inventory(GpuInventory{{}, "no driver"})).problem,
              "no driver");
    EXPECT_FALSE(parse_inventory("garbage\n").problem.empty());
    EXPECT_TRUE(parse_inventory("").gpus.empty());
}

TEST(GpuInventoryText, SaysWhichWayFoundTheGpus)
{
    auto inventory = gpus(1);
    inventory.source = std::string(k_source_driver_api);
    const auto back = parse_inventory(format_inventory(inventory));
    EXPECT_EQ(back.source, "CUDA driver API");
    ASSERT_EQ(back.gpus.size(), 1u);
    EXPECT_EQ(back.gpus[0].uuid, "GPU-00000000");
}

// GPU 0 has MIG enabled and two instances; GPU 1 is whole.
GpuInventory with_mig()
{
    auto inventory = gpus(2);
    inventory.gpus[0].mig_enabled = true;
    inventory.migs = {
        MigInfo{"MIG-1f2e3d4c-0000-0000-0000-000000000000", 0, "GPU-00000000", 0, 1, 0, "3g", 40},
        MigInfo{"MIG-5a6b7c8d-0000-0000-0000-000000000000", 0, "GPU-00000000", 1, 2, 0, "3g", 40}};
    return inventory;
}

TEST(GpuDiscovery, AGpuWithMigEnabledGivesItsInstancesInItsPlace)
{
    FakeProbe probe(with_mig());
    const Ids expected{"MIG-1f2e3d4c-0000-0000-0000-000000000000",
                       "MIG-5a6b7c8d-0000-0000-0000-000000000000"};
    EXPECT_EQ(resolve_gpu_ids({}, std::nullopt, probe).value(),
              (Ids{expected[0], expected[1], "1"}));
    EXPECT_EQ(resolve_gpu_ids({}, std::nullopt, probe, true).value(),
              (Ids{expected[0], expected[1], "GPU-00000001"}));

    auto only_mig = with_mig();
    only_mig.gpus.pop_back();
    only_mig.migs.clear();
    FakeProbe empty(only_mig);
    const auto none = resolve_gpu_ids({}, std::nullopt, empty);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.failure().message.find("none has a MIG instance"), std::string::npos);
}

TEST(GpuDiscovery, AMigInstanceIsFoundByEveryNameCudaTakes)
{
    const auto inventory = with_mig();
    const auto uuid = [&](std::string_view id) {
        const auto* mig = find_mig(inventory, id);
        return mig != nullptr ? mig->uuid : std::string("none");
    };
    EXPECT_EQ(uuid("MIG-5a6b7c8d-0000-0000-0000-000000000000"), inventory.migs[1].uuid);
    EXPECT_EQ(uuid("MIG-5a6b"), inventory.migs[1].uuid);
    EXPECT_EQ(uuid("MIG-GPU-00000000/2/0"), inventory.migs[1].uuid);
    EXPECT_EQ(uuid("MIG-"), "none") << "names both";
    EXPECT_EQ(uuid("MIG-GPU-00000000/3/0"), "none");
    EXPECT_EQ(uuid("MIG-9999"), "none");
}

TEST(GpuInventoryText, CarriesMigModesAndInstances)
{
    const auto inventory = with_mig();
    const auto back = parse_inventory(format_inventory(inventory));
    ASSERT_TRUE(back.problem.empty()) << back.problem;
    ASSERT_EQ(back.gpus.size(), 2u);
    EXPECT_TRUE(back.gpus[0].mig_enabled);
    EXPECT_FALSE(back.gpus[1].mig_enabled);
    ASSERT_EQ(back.migs.size(), 2u);
    const auto& mig = back.migs[1];
    EXPECT_EQ(mig.uuid, inventory.migs[1].uuid);
    EXPECT_EQ(mig.parent_index, 0);
    EXPECT_EQ(mig.parent_uuid, "GPU-00000000");
    EXPECT_EQ(mig.device, 1);
    EXPECT_EQ(mig.gpu_instance, 2u);
    EXPECT_EQ(mig.compute_instance, 0u);
    EXPECT_EQ(mig.name, "3g");
    EXPECT_EQ(mig.total_memory, 40u);
    EXPECT_FALSE(parse_inventory("0\tGPU-0\t1\tH100\nmig-mode\t3\n").problem.empty())
        << "a MIG mode for a GPU not listed";
    EXPECT_FALSE(parse_inventory("mig\t0\tGPU-0\tx\t1\t0\tMIG-1\t1\tn\n").problem.empty());
}

TEST(GpuUuid, FormatsLikeNvidiaSmi)
{
    const unsigned char bytes[16] = {0x8e, 0x6b, 0x0c, 0x3a, 0x2f, 0x1d, 0x4c, 0x55,
                                     0x9f, 0x0e, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
    EXPECT_EQ(format_gpu_uuid(bytes), "GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab");
}

} // namespace
} // namespace gpusched
