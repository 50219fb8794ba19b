#include <gpusched/lease_names.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(LeaseNames, PlainIdsAndUuidsKeepTheirLetters)
{
    EXPECT_EQ(lease_record_file_name("0"), "0.record");
    EXPECT_EQ(lease_record_file_name("GPU-8e6b0c3a-2f1d"), "GPU-8e6b0c3a-2f1d.record");
}

TEST(LeaseNames, NoIdCanLeaveTheDirectoryOrHideAsAnotherFile)
{
    EXPECT_EQ(lease_record_file_name("../../x"), "%2E%2E%2F%2E%2E%2Fx.record");
    EXPECT_EQ(lease_record_file_name("."), "%2E.record");
    EXPECT_EQ(lease_record_file_name("MIG-GPU-1/2/0"), "MIG-GPU-1%2F2%2F0.record");
    EXPECT_EQ(lease_record_file_name("a%b"), "a%25b.record");
    EXPECT_EQ(lease_record_file_name(std::string("a\0b\n", 4)), "a%00b%0A.record");
    EXPECT_EQ(lease_record_file_name("\xff"), "%FF.record");
    EXPECT_NE(lease_record_file_name("0.record"), lease_record_file_name("0"))
        << "the suffix cannot be faked";
}

TEST(LeaseNames, FileNamesReadBackToTheirKeys)
{
    for (const std::string key : {"0", "GPU-8e6b0c3a", "../../x", "MIG-GPU-1/2/0", "a%b", " "}) {
        EXPECT_EQ(lease_key_of_record_file(lease_record_file_name(key)), key) << key;
    }
}

TEST(LeaseNames, OtherFileNamesAreNotLeases)
{
    for (const char* name : {".record", "0", "0.rec", "%2.record", "%2e.record", "%41.record",
                             "a.b.record", "%zz.record", "x%.record"}) {
        EXPECT_FALSE(lease_key_of_record_file(name).has_value()) << name;
    }
}

TEST(LeaseSockets, EveryLockDirectoryIsASpaceOfItsOwn)
{
    const auto shared = lease_space("/run/lock/gpusched");
    EXPECT_EQ(shared, lease_space("/run/lock/gpusched")) << "the same for every user and run";
    EXPECT_NE(shared, lease_space("/tmp/gpusched-leases"));
    EXPECT_TRUE(shared.starts_with("gpusched-lease/")) << shared;
    EXPECT_EQ(shared.size(), std::string("gpusched-lease/").size() + 16 + 1) << shared;
}

TEST(LeaseSockets, NamesAreEncodedAndReadBack)
{
    const auto space = lease_space("/run/lock/gpusched");
    EXPECT_EQ(lease_socket_name(space, "GPU-8e6b0c3a-2f1d"), space + "GPU-8e6b0c3a-2f1d");
    EXPECT_EQ(lease_socket_name(space, "MIG-GPU-1/2/0"), space + "MIG-GPU-1%2F2%2F0");
    for (const std::string key : {"0", "GPU-8e6b0c3a", "../../x", "a%b", " ", "a\nb"}) {
        EXPECT_EQ(lease_key_of_socket_name(space, lease_socket_name(space, key)), key) << key;
    }
    EXPECT_FALSE(lease_key_of_socket_name(space, lease_socket_name("other/", "0")).has_value());
    EXPECT_FALSE(lease_key_of_socket_name(space, space).has_value());
}

TEST(LeaseSockets, LongKeysFitAnAbstractNameAndStayApart)
{
    const auto space = lease_space("/run/lock/gpusched");
    const std::string long_key(200, '/');
    const auto name = lease_socket_name(space, long_key);
    EXPECT_EQ(name.size(), k_longest_socket_name);
    EXPECT_NE(name, lease_socket_name(space, long_key + "/"));
    EXPECT_FALSE(lease_key_of_socket_name(space, name).has_value()) << "a hash does not read back";
    const std::string uuid_mig = "MIG-GPU-8e6b0c3a-2f1d-4b5c-9d7e-0123456789ab/13/0";
    EXPECT_EQ(lease_key_of_socket_name(space, lease_socket_name(space, uuid_mig)), uuid_mig);
}

TEST(LeaseKeys, IndicesTheProbeFoundBecomeUuids)
{
    GpuInventory inventory;
    inventory.gpus = {GpuInfo{0, "GPU-aaaa", "H100", 1}, GpuInfo{1, "GPU-bbbb", "H100", 1}};
    EXPECT_EQ(lease_keys({"1", "0", "7", "GPU-cccc", "MIG-dddd"}, inventory),
              (std::vector<std::string>{"GPU-bbbb", "GPU-aaaa", "7", "GPU-cccc", "MIG-dddd"}));
}

TEST(LeaseKeys, TheStartOfAUuidIsLeasedAsTheGpuItNames)
{
    GpuInventory inventory;
    inventory.gpus = {GpuInfo{0, "GPU-aaaa1111", "H100", 1}, GpuInfo{1, "GPU-aaaa2222", "H100", 1}};
    EXPECT_EQ(lease_keys({"GPU-aaaa1", "GPU-aaaa2222", "GPU-aaaa", "GPU-b"}, inventory),
              (std::vector<std::string>{"GPU-aaaa1111", "GPU-aaaa2222", "GPU-aaaa", "GPU-b"}))
        << "one GPU it names: its UUID; several or none: as given";
    EXPECT_TRUE(has_partial_uuids({"0", "GPU-8e6b"}));
    EXPECT_FALSE(has_partial_uuids({"GPU-8e6b0c3a-2f1d-4b5c-9d7e-0123456789ab", "1", "MIG-1"}));
}

TEST(LeaseKeys, AnAmbiguousStartOfAUuidOrOneGpuNamedTwiceIsAProblemNamed)
{
    GpuInventory inventory;
    inventory.gpus = {GpuInfo{0, "GPU-aaaa1111", "H100", 1}, GpuInfo{1, "GPU-aaaa2222", "H100", 1}};
    const auto problem = [&](const std::vector<std::string>& ids) {
        return lease_keys_problem(ids, lease_keys(ids, inventory), inventory).value_or("");
    };
    EXPECT_EQ(problem({"GPU-aaaa"}), "GPU GPU-aaaa is the start of the UUIDs of 2 GPUs "
                                     "(GPU-aaaa1111, GPU-aaaa2222): give enough of its UUID to "
                                     "name one");
    EXPECT_EQ(problem({"0", "GPU-aaaa1"}), "GPUs 0 and GPU-aaaa1 are one GPU (GPU-aaaa1111): "
                                           "name it once");
    EXPECT_EQ(problem({"GPU-aaaa2222", "1"}), "GPUs GPU-aaaa2222 and 1 are one GPU "
                                              "(GPU-aaaa2222): name it once");
    EXPECT_EQ(problem({"0", "GPU-aaaa2", "GPU-cccc", "7"}), "") << "each names one GPU";
    EXPECT_EQ(lease_keys_problem({"GPU-aaaa"}, {"GPU-aaaa"}, {}), std::nullopt)
        << "no GPU listed: nothing to tell it from";
}

TEST(LeaseKeys, AMigInstanceTheProbeFoundIsLeasedByItsWholeUuidWithItsGpu)
{
    GpuInventory inventory;
    inventory.gpus = {GpuInfo{0, "GPU-aaaa0000-0000-0000-0000-000000000000", "H100", 1}};
    inventory.gpus[0].mig_enabled = true;
    const std::string mig = "MIG-bbbb0000-0000-0000-0000-000000000000";
    inventory.migs = {MigInfo{mig, 0, inventory.gpus[0].uuid, 0, 3, 0, "1g", 1}};
    const std::vector<std::string> ids{
        "MIG-bbbb", "MIG-GPU-aaaa0000-0000-0000-0000-000000000000/3/0", mig, "MIG-cccc", "0"};
    const auto keys = lease_keys(ids, inventory);
    EXPECT_EQ(keys, (std::vector<std::string>{mig, mig, mig, "MIG-cccc", inventory.gpus[0].uuid}));
    EXPECT_EQ(lease_parents(keys, inventory),
              (std::vector<std::string>{inventory.gpus[0].uuid, inventory.gpus[0].uuid,
                                        inventory.gpus[0].uuid, "", ""}));
    // The old form names its GPU itself.
    EXPECT_EQ(lease_parents({"MIG-GPU-dddd0000-0000-0000-0000-000000000000/1/0"}, GpuInventory{}),
              std::vector<std::string>{"GPU-dddd0000-0000-0000-0000-000000000000"});
}

TEST(LeaseSockets, AMigInstancesShareIsNamedUnderItsGpuAndNeverReadsBackAsAKey)
{
    const auto space = lease_space("/run/lock/gpusched");
    const std::string gpu = "GPU-8e6b0c3a-2f1d-4b5c-9d7e-0123456789ab";
    const std::string mig = "MIG-1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b";
    const auto share = lease_share_name(space, gpu, mig);
    EXPECT_LE(share.size(), k_longest_socket_name);
    EXPECT_TRUE(share.starts_with(lease_shares_prefix(space, gpu)));
    EXPECT_TRUE(share.starts_with(lease_shares_prefix(space, "GPU-8e6b"))) << "an abbreviation";
    EXPECT_TRUE(is_lease_share(space, share));
    EXPECT_FALSE(is_lease_share(space, lease_socket_name(space, gpu)));
    EXPECT_FALSE(is_lease_share(space, lease_socket_name(space, "MIG-GPU-8e6b/1/0")));
    EXPECT_FALSE(lease_key_of_socket_name(space, share).has_value());
    EXPECT_NE(share, lease_share_name(space, gpu, "MIG-9"));
    EXPECT_TRUE(may_have_mig_instances(gpu));
    EXPECT_FALSE(may_have_mig_instances(mig));
    EXPECT_FALSE(may_have_mig_instances("0"));
}

TEST(LeaseSockets, AMemoryShareSaysWhoPromisedHowMuchAndIsAShareOfItsGpu)
{
    const auto space = lease_space("/run/lock/gpusched");
    const std::string gpu = "GPU-8e6b0c3a-2f1d-4b5c-9d7e-0123456789ab";
    const auto name = lease_memory_share_name(space, gpu, {4194304, 12345678, 20480});
    ASSERT_TRUE(name.has_value());
    EXPECT_LE(name->size(), k_longest_socket_name);
    EXPECT_TRUE(is_lease_share(space, *name)) << "a whole GPU's lease sees it like a MIG share";
    EXPECT_TRUE(is_lease_memory_share(space, *name));
    EXPECT_FALSE(is_lease_memory_share(space, lease_share_name(space, gpu, "MIG-9")));
    EXPECT_FALSE(is_lease_memory_share(space, lease_socket_name(space, gpu)));
    EXPECT_TRUE(name->starts_with(lease_shares_prefix(space, "GPU-8e6b")));
    EXPECT_FALSE(lease_key_of_socket_name(space, *name).has_value());
    const auto prefix = lease_memory_shares_prefix(space, gpu);
    const auto read = parse_lease_memory_share(prefix, *name);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->pid, 4194304);
    EXPECT_EQ(read->job, 12345678U);
    EXPECT_EQ(read->mib, 20480U);
    // Another GPU's, a MIG instance's share, and names that are not what a share writes.
    EXPECT_FALSE(parse_lease_memory_share(lease_memory_shares_prefix(space, "1"),
                                          *lease_memory_share_name(space, "10", {1, 1, 1})));
    EXPECT_FALSE(parse_lease_memory_share(prefix, lease_share_name(space, gpu, "MIG-9")));
    for (const char* rest : {"", "1.2", "1.2.", "0.1.2", "-1.1.2", "1.2.3.4", "1..2", "1.2.x",
                             "1.2.99999999999999999999999"}) {
        EXPECT_FALSE(parse_lease_memory_share(prefix, prefix + rest)) << rest;
    }
    EXPECT_FALSE(lease_memory_share_name(space, std::string(80, 'x'), {1, 1, 1}))
        << "too long for a socket: no share, the whole lease instead";
    const auto waits_whole = lease_whole_wait_name(space, gpu);
    ASSERT_TRUE(waits_whole.has_value());
    EXPECT_TRUE(waits_whole->starts_with(lease_socket_name(space, gpu)));
    EXPECT_FALSE(is_lease_share(space, *waits_whole)) << "no whole lease is let go for it";
    EXPECT_FALSE(lease_key_of_socket_name(space, *waits_whole).has_value());
    EXPECT_FALSE(lease_admission_name(space, gpu).starts_with(lease_shares_prefix(space, gpu)))
        << "admitting a share never blocks a whole GPU's lease";
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
    EXPECT_TRUE(has_mig_ids({"GPU-aaaa", "MIG-bbbb"}));
    EXPECT_FALSE(has_mig_ids({"GPU-aaaa", "3"}));
}

} // namespace
} // namespace gpusched
