// Numbers from options and files: what is accepted, and what the errors say.
#include <gpusched/halt_policy.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/number_checks.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace gpusched {
namespace {

template <class T>
std::string error_of(const Result<T>& parsed)
{
    return parsed ? "" : parsed.message();
}

TEST(NumberChecks, WholeNumbersAreDecimalDigitsInRange)
{
    EXPECT_EQ(parse_whole_number("7", 1, 10).value(), 7u);
    EXPECT_EQ(parse_whole_number("010", 0, 100).value(), 10u) << "not octal";
    EXPECT_EQ(
        parse_whole_number("18446744073709551615", 0, std::numeric_limits<std::uint64_t>::max())
            .value(),
        std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(error_of(parse_whole_number("11", 1, 10)),
              "11 is out of range: must be a whole number from 1 to 10");
    EXPECT_EQ(error_of(parse_whole_number("-1", 0, 10)),
              "-1 is not a whole number: must be a whole number from 0 to 10");
    EXPECT_EQ(error_of(parse_whole_number("0", 1, std::numeric_limits<std::uint64_t>::max())),
              "0 is out of range: must be a whole number at least 1");
    for (const auto* bad : {"", "0x10", "1e3", "1.0", "+1", " 1", "18446744073709551616"}) {
        EXPECT_NE(error_of(parse_whole_number(bad, 0, std::numeric_limits<std::uint64_t>::max())),
                  "")
            << bad;
    }
}

TEST(NumberChecks, IntegersMayBeNegative)
{
    EXPECT_EQ(parse_integer("-5", -10, 10).value(), -5);
    EXPECT_EQ(parse_integer("10", -10, 10).value(), 10);
    EXPECT_EQ(error_of(parse_integer("-11", -10, 10)),
              "-11 is out of range: must be a whole number from -10 to 10");
    for (const auto* bad : {"", "-", "--1", "+1", "1.5", "nan", "0x1", "99999999999999999999"}) {
        EXPECT_NE(error_of(parse_integer(bad, -10, 10)), "") << bad;
    }
}

TEST(NumberChecks, HaltLimitsAreWholeCountsOrFinitePercentages)
{
    for (const auto* bad : {"now,fail=nan", "now,fail=inf", "now,fail=nan%", "now,fail=inf%",
                            "now,fail=1.5", "now,fail=-1", "now,fail=1e3", "now,fail=0%"}) {
        EXPECT_FALSE(HaltPolicy::parse(bad).ok()) << bad;
    }
    EXPECT_DOUBLE_EQ(HaltPolicy::parse("soon,fail=12.5%").value().limit, 12.5);
    EXPECT_DOUBLE_EQ(HaltPolicy::parse("soon,done=3").value().limit, 3);
}

std::string record_line(const std::string& start, const std::string& runtime,
                        const std::string& exit_value = "0", const std::string& signal = "0")
{
    return "1\t:\t" + start + "\t" + runtime + "\t0\t0\t" + exit_value + "\t" + signal + "\tcmd\t0";
}

TEST(NumberChecks, JoblogNumbersAreInTheRangesARunWrites)
{
    EXPECT_TRUE(parse_joblog_line(record_line("1700000000.125", "2.5", "-1", "127")).ok());
    EXPECT_EQ(error_of(parse_joblog_line(record_line("1e308", "1"))),
              "bad Starttime '1e308': must be from 0 to 4102444800 (seconds since 1970, before "
              "the year 2100)");
    EXPECT_EQ(error_of(parse_joblog_line(record_line("1700000000", "nan"))),
              "bad JobRuntime 'nan': must be from 0 to 3155760000 seconds");
    EXPECT_EQ(error_of(parse_joblog_line(record_line("1700000000", "1", "256"))),
              "bad Exitval '256': must be from -2 to 255");
    EXPECT_EQ(error_of(parse_joblog_line(record_line("1700000000", "1", "0", "128"))),
              "bad Signal '128': must be from 0 to 127");
    for (const auto& [start, runtime] :
         std::vector<std::pair<std::string, std::string>>{{"inf", "1"},
                                                          {"-1", "1"},
                                                          {"nan", "1"},
                                                          {"1700000000", "-0.5"},
                                                          {"1700000000", "inf"},
                                                          {"1700000000", "1e300"}}) {
        EXPECT_NE(error_of(parse_joblog_line(record_line(start, runtime))), "")
            << start << " " << runtime;
    }
}

} // namespace
} // namespace gpusched
