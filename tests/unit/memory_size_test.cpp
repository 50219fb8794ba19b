#include <gpusched/memory_size.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpusched {
namespace {

constexpr std::uint64_t k_one_mib = std::uint64_t{1} << 20;
constexpr std::uint64_t k_one_gib = std::uint64_t{1} << 30;

TEST(MemorySize, UnitsArePowersOf1024InEitherCaseAndSpelling)
{
    EXPECT_EQ(*parse_memory_size("20G"), 20 * k_one_gib);
    EXPECT_EQ(*parse_memory_size("20g"), 20 * k_one_gib);
    EXPECT_EQ(*parse_memory_size("20GiB"), 20 * k_one_gib);
    EXPECT_EQ(*parse_memory_size("20GB"), 20 * k_one_gib);
    EXPECT_EQ(*parse_memory_size("8000M"), 8000 * k_one_mib);
    EXPECT_EQ(*parse_memory_size("512K"), 512u * 1024);
    EXPECT_EQ(*parse_memory_size("1T"), 1024 * k_one_gib);
    EXPECT_EQ(*parse_memory_size("1.5G"), 1536 * k_one_mib);
    EXPECT_EQ(*parse_memory_size("0.1K"), 103u) << "a fraction is rounded up to the byte";
}

TEST(MemorySize, WhatIsNotASizeIsRefusedAndSaysWhy)
{
    for (const std::string& text : std::vector<std::string>{"",
                                                            "20",
                                                            "G",
                                                            "-1G",
                                                            "0G",
                                                            "0.0M",
                                                            "1e3G",
                                                            "nan",
                                                            "inf",
                                                            "NaNG",
                                                            "20X",
                                                            "20Gb ",
                                                            " 20G",
                                                            "20GiBs",
                                                            "1.2.3G",
                                                            ".5G",
                                                            "5.G",
                                                            "2000T",
                                                            "99999999999999999999G",
                                                            std::string("2\0G", 3)}) {
        const auto parsed = parse_memory_size(text);
        EXPECT_FALSE(parsed) << text << " gave " << (parsed ? *parsed : 0);
        if (!parsed) {
            EXPECT_NE(parsed.message().find("is not a size of memory"), std::string::npos)
                << parsed.message();
        }
    }
    EXPECT_EQ(*parse_memory_size("1024T"), k_most_job_memory) << "the bound itself";
}

TEST(MemorySize, ShownInTheLargestUnitWithADecimalWhereItSaysSomething)
{
    EXPECT_EQ(format_memory_size(20 * k_one_gib), "20 GiB");
    EXPECT_EQ(format_memory_size(1536 * k_one_mib), "1.5 GiB");
    EXPECT_EQ(format_memory_size(800 * k_one_mib), "800 MiB");
    EXPECT_EQ(format_memory_size(12), "12 B");
    EXPECT_EQ(format_memory_size(0), "0 B");
}

} // namespace
} // namespace gpusched
