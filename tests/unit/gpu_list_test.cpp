#include <gpusched/gpu_list.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpusched {
namespace {

using Ids = std::vector<std::string>;

Ids parsed_ids(const Ids& tokens)
{
    auto parsed = parse_gpu_list(tokens);
    if (!parsed) {
        ADD_FAILURE() << parsed.message();
        return {};
    }
    return *parsed;
}

std::string list_error(const Result<Ids>& parsed)
{
    return parsed ? "(no error)" : parsed.message();
}

TEST(GpuList, SpaceAndCommaSeparated)
{
    EXPECT_EQ(parsed_ids({"0", "1", "2"}), (Ids{"0", "1", "2"}));
    EXPECT_EQ(parsed_ids({"0,1,2"}), (Ids{"0", "1", "2"}));
    EXPECT_EQ(parsed_ids({"0", "1,2"}), (Ids{"0", "1", "2"}));
}

TEST(GpuList, Ranges)
{
    EXPECT_EQ(parsed_ids({"0-3"}), (Ids{"0", "1", "2", "3"}));
    EXPECT_EQ(parsed_ids({"4-4,6"}), (Ids{"4", "6"}));
}

TEST(GpuList, OpaqueIdsPassThrough)
{
    const Ids ids = {"GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab",
                     "MIG-1f2e3d4c-5b6a-7980-1a2b-3c4d5e6f7a8b"};
    EXPECT_EQ(parsed_ids(ids), ids);
}

TEST(GpuList, UuidsAndTheirPrefixesAreIds)
{
    const Ids ids = {"GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789AB",
                     "GPU-8e6b",
                     "GPU-8e6b0c3a-",
                     "GPU-0",
                     "MIG-1f2e",
                     "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab/1/0",
                     "MIG-GPU-8e6b"};
    EXPECT_EQ(parsed_ids(ids), ids);
}

std::string refusal(const std::string& token)
{
    return list_error(parse_gpu_list({"0", token}));
}

TEST(GpuList, AnythingElseIsNotAGpuId)
{
    for (const std::string bad : {"pus",
                                  "echo",
                                  "0x1",
                                  "+1",
                                  "-1",
                                  "1-",
                                  "0-",
                                  "-",
                                  "--",
                                  "1-2-3",
                                  "1.5",
                                  "１",
                                  "GPU-",
                                  "GPU-x",
                                  "GPU-8e6g",
                                  "GPU--8e6b",
                                  "GPU-8e6b0c3a2",
                                  "GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab0",
                                  "gpu-8e6b",
                                  "GPU8e6b",
                                  "MIG-",
                                  "MIG-x",
                                  "MIG-GPU-",
                                  "MIG-GPU-8e6b/1/0",
                                  "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab/1",
                                  "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab/1/x",
                                  "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab/1/0/2",
                                  "../escaped",
                                  "0/1"}) {
        EXPECT_NE(refusal(bad).find(fmt::format("'{}' in '--gpus {}' is not a GPU id (a number, "
                                                "a range such as 0-3, or a GPU-/MIG- UUID)",
                                                bad, bad)),
                  std::string::npos)
            << bad << ": " << refusal(bad);
    }
    EXPECT_NE(list_error(parse_gpu_list({"0,pus"})).find("'pus' in '--gpus 0,pus'"),
              std::string::npos);
}

TEST(GpuList, AMisreadLongOptionIsNamed)
{
    EXPECT_EQ(list_error(parse_gpu_list({"pus", "0"})),
              "'pus' in '--gpus pus' is not a GPU id (a number, a range such as 0-3, or a "
              "GPU-/MIG- UUID); -gpus is read as -g pus: did you mean --gpus?");
    EXPECT_NE(list_error(parse_gpu_list({"pus-per-job", "2"})).find("did you mean --gpus-per-job?"),
              std::string::npos);
    EXPECT_EQ(refusal("pus").find("did you mean"), std::string::npos) << "not right after -g";
    EXPECT_EQ(list_error(parse_gpu_list({"pus"}, "GPUSCHED_GPUS")).find("did you mean"),
              std::string::npos);
}

TEST(GpuList, TheSourceIsNamed)
{
    EXPECT_NE(list_error(parse_gpu_list({"0,x"}, "GPUSCHED_GPUS")).find("'GPUSCHED_GPUS=0,x'"),
              std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"1,1"}, "--gpus")).find("'--gpus 1,1'"),
              std::string::npos);
}

TEST(GpuList, IndicesAreNormalised)
{
    EXPECT_EQ(parsed_ids({"007"}), (Ids{"7"}));
}

TEST(GpuList, DuplicatesAreErrors)
{
    EXPECT_NE(list_error(parse_gpu_list({"0,0"})).find("'0' is listed twice"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"0-2", "1"})).find("listed twice"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"0", "00"})).find("listed twice"), std::string::npos);
}

TEST(GpuList, EmptyEntriesAreErrors)
{
    EXPECT_NE(list_error(parse_gpu_list({"0,"})).find("empty GPU id in '--gpus 0,'"),
              std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({",1"})).find("empty"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({""})).find("empty"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({})).find("at least one"), std::string::npos);
}

TEST(GpuList, BadRangesAreErrors)
{
    EXPECT_NE(list_error(parse_gpu_list({"3-1"})).find("bad GPU range '3-1'"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"0-99999999"})).find("bad GPU range"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"99999999"})).find("larger than"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"99999999999999999999999"})).find("larger than"),
              std::string::npos)
        << "more than an unsigned long holds";
    EXPECT_NE(list_error(parse_gpu_list({"65536"})).find("larger than 65535"), std::string::npos);
    EXPECT_EQ(parsed_ids({"65535"}), (Ids{"65535"}));
    EXPECT_EQ(parsed_ids({"01-02"}), (Ids{"1", "2"}));
}

TEST(GpuList, WhitespaceInsideAnIdIsAnError)
{
    EXPECT_NE(list_error(parse_gpu_list({"0 1"})).find("whitespace"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({" 1"})).find("whitespace"), std::string::npos);
    EXPECT_NE(list_error(parse_gpu_list({"1\n"})).find("whitespace"), std::string::npos);
}

TEST(GpuList, TellsGpuIdsFromFileNames)
{
    EXPECT_TRUE(looks_like_gpu_ids("0"));
    EXPECT_TRUE(looks_like_gpu_ids("0,1,4-7"));
    EXPECT_TRUE(looks_like_gpu_ids("GPU-8e6b0c3a,MIG-1f2e"));
    EXPECT_TRUE(looks_like_gpu_ids("0,")) << "left to the parser, which names the empty entry";
    EXPECT_FALSE(looks_like_gpu_ids("commands.txt"));
    EXPECT_FALSE(looks_like_gpu_ids("-"));
    EXPECT_FALSE(looks_like_gpu_ids("queue.fifo"));
    EXPECT_FALSE(looks_like_gpu_ids("echo"));
    EXPECT_FALSE(looks_like_gpu_ids("7z"));
    EXPECT_TRUE(looks_like_gpu_ids("0-")) << "a bad range, said to be one, not run as a command";
    EXPECT_TRUE(looks_like_gpu_ids("3-1"));
    EXPECT_TRUE(looks_like_gpu_ids("GPU-x"));
}

TEST(VisibleDevices, EntriesKeptAsWritten)
{
    auto parsed = parse_visible_devices("3,1,GPU-abc,MIG-GPU-8e6b");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, (Ids{"3", "1", "GPU-abc", "MIG-GPU-8e6b"}));
}

TEST(VisibleDevices, IndicesLoseTheirLeadingZeros)
{
    auto parsed = parse_visible_devices("03,1");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, (Ids{"3", "1"}));
    EXPECT_NE(list_error(parse_visible_devices("0,00")).find("twice"), std::string::npos);
}

TEST(VisibleDevices, BadIdsNameTheVariable)
{
    EXPECT_EQ(list_error(parse_visible_devices("0,pus")),
              "'pus' in 'CUDA_VISIBLE_DEVICES=0,pus' is not a GPU id (a number or a GPU-/MIG- "
              "UUID; CUDA reads no ranges)");
    for (const std::string bad : {"0-3", "-1", "GPU-", "GPU-zz", "0x1", "all", "none"}) {
        EXPECT_NE(
            list_error(parse_visible_devices(bad))
                .find(fmt::format("'{}' in 'CUDA_VISIBLE_DEVICES={}' is not a GPU id", bad, bad)),
            std::string::npos)
            << bad;
    }
    EXPECT_NE(list_error(parse_visible_devices("70000")).find("larger than"), std::string::npos);
}

TEST(VisibleDevices, EmptyMeansNoGpu)
{
    EXPECT_NE(list_error(parse_visible_devices("")).find("empty"), std::string::npos);
    EXPECT_NE(list_error(parse_visible_devices("0,,1")).find("empty"), std::string::npos);
    EXPECT_NE(list_error(parse_visible_devices("1,1")).find("twice"), std::string::npos);
}

} // namespace
} // namespace gpusched
