#include <gpusched/gpu_list.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

using Ids = std::vector<std::string>;

Ids parsed_ids(const Ids& tokens)
{
    auto parsed = parse_gpu_list(tokens);
    if (auto* error = std::get_if<ParseError>(&parsed)) {
        ADD_FAILURE() << error->message;
        return {};
    }
    return std::get<Ids>(parsed);
}

std::string error_of(const Parsed<Ids>& parsed)
{
    const auto* error = std::get_if<ParseError>(&parsed);
    return error != nullptr ? error->message : "(no error)";
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

TEST(GpuList, IndicesAreNormalised)
{
    EXPECT_EQ(parsed_ids({"007"}), (Ids{"7"}));
}

TEST(GpuList, DuplicatesAreErrors)
{
    EXPECT_NE(error_of(parse_gpu_list({"0,0"})).find("'0' is listed twice"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({"0-2", "1"})).find("listed twice"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({"0", "00"})).find("listed twice"), std::string::npos);
}

TEST(GpuList, EmptyEntriesAreErrors)
{
    EXPECT_NE(error_of(parse_gpu_list({"0,"})).find("empty GPU id in '--gpus 0,'"),
              std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({",1"})).find("empty"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({""})).find("empty"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({})).find("at least one"), std::string::npos);
}

TEST(GpuList, BadRangesAreErrors)
{
    EXPECT_NE(error_of(parse_gpu_list({"3-1"})).find("bad GPU range '3-1'"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({"0-99999999"})).find("bad GPU range"), std::string::npos);
    EXPECT_NE(error_of(parse_gpu_list({"99999999"})).find("larger than"), std::string::npos);
}

TEST(GpuList, WhitespaceInsideAnIdIsAnError)
{
    EXPECT_NE(error_of(parse_gpu_list({"0 1"})).find("whitespace"), std::string::npos);
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
}

TEST(VisibleDevices, EntriesKeptAsWritten)
{
    auto parsed = parse_visible_devices("3,1,GPU-abc");
    ASSERT_TRUE(std::holds_alternative<Ids>(parsed));
    EXPECT_EQ(std::get<Ids>(parsed), (Ids{"3", "1", "GPU-abc"}));
}

TEST(VisibleDevices, EmptyMeansNoGpu)
{
    EXPECT_NE(error_of(parse_visible_devices("")).find("empty"), std::string::npos);
    EXPECT_NE(error_of(parse_visible_devices("0,,1")).find("empty"), std::string::npos);
    EXPECT_NE(error_of(parse_visible_devices("1,1")).find("twice"), std::string::npos);
}

} // namespace
} // namespace gpusched
