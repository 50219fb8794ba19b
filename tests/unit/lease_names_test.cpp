#include <gpusched/lease_names.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(LeaseNames, PlainIdsAndUuidsKeepTheirLetters)
{
    EXPECT_EQ(lease_file_name("0"), "0.lock");
    EXPECT_EQ(lease_file_name("GPU-8e6b0c3a-2f1d"), "GPU-8e6b0c3a-2f1d.lock");
}

TEST(LeaseNames, NoIdCanLeaveTheDirectoryOrHideAsAnotherFile)
{
    EXPECT_EQ(lease_file_name("../../x"), "%2E%2E%2F%2E%2E%2Fx.lock");
    EXPECT_EQ(lease_file_name("."), "%2E.lock");
    EXPECT_EQ(lease_file_name("MIG-GPU-1/2/0"), "MIG-GPU-1%2F2%2F0.lock");
    EXPECT_EQ(lease_file_name("a%b"), "a%25b.lock");
    EXPECT_EQ(lease_file_name(std::string("a\0b\n", 4)), "a%00b%0A.lock");
    EXPECT_EQ(lease_file_name("\xff"), "%FF.lock");
    EXPECT_NE(lease_file_name("0.lock"), lease_file_name("0")) << "the suffix cannot be faked";
}

TEST(LeaseNames, FileNamesReadBackToTheirKeys)
{
    for (const std::string key : {"0", "GPU-8e6b0c3a", "../../x", "MIG-GPU-1/2/0", "a%b", " "}) {
        EXPECT_EQ(lease_key_of_file(lease_file_name(key)), key) << key;
    }
}

TEST(LeaseNames, OtherFileNamesAreNotLeases)
{
    for (const char* name : {".lock", "0", "0.lck", "%2.lock", "%2e.lock", "%41.lock", "a.b.lock",
                             "%zz.lock", "x%.lock"}) {
        EXPECT_FALSE(lease_key_of_file(name).has_value()) << name;
    }
}

TEST(LeaseKeys, IndicesTheProbeFoundBecomeUuids)
{
    GpuInventory inventory;
    inventory.gpus = {GpuInfo{0, "GPU-aaaa", "H100", 1}, GpuInfo{1, "GPU-bbbb", "H100", 1}};
    EXPECT_EQ(lease_keys({"1", "0", "7", "GPU-cccc", "MIG-dddd"}, inventory),
              (std::vector<std::string>{"GPU-bbbb", "GPU-aaaa", "7", "GPU-cccc", "MIG-dddd"}));
}

TEST(LeaseKeys, WithoutAProbeIdsAreTheirOwnKeys)
{
    GpuInventory none;
    none.problem = "no CUDA";
    EXPECT_EQ(lease_keys({"0", "1"}, none), (std::vector<std::string>{"0", "1"}));
}

TEST(LeaseKeys, OnlyPlainIndicesNeedTheProbe)
{
    EXPECT_TRUE(has_gpu_indices({"GPU-aaaa", "3"}));
    EXPECT_FALSE(has_gpu_indices({"GPU-aaaa", "MIG-bbbb", "-1"}));
}

} // namespace
} // namespace gpusched
