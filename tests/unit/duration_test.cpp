// Durations as every option takes them: plain seconds or numbers with units, and errors that
// say in words what is wrong.
#include <gpusched/duration.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

double seconds(std::string_view text, bool zero_allowed = false)
{
    const auto parsed = parse_duration(text, zero_allowed);
    if (!parsed) {
        ADD_FAILURE() << text << ": " << parsed.message();
        return -1;
    }
    return *parsed;
}

std::string duration_error(std::string_view text, bool zero_allowed = false,
                           double most = k_longest_seconds)
{
    const auto parsed = parse_duration(text, zero_allowed, most);
    return parsed ? "accepted" : parsed.message();
}

TEST(Duration, PlainNumbersAreSeconds)
{
    EXPECT_DOUBLE_EQ(seconds("30"), 30);
    EXPECT_DOUBLE_EQ(seconds("1.5"), 1.5);
    EXPECT_DOUBLE_EQ(seconds("2e3"), 2000);
    EXPECT_DOUBLE_EQ(seconds("31536000"), 31536000);
    EXPECT_DOUBLE_EQ(seconds("0", true), 0);
}

TEST(Duration, UnitsAreSecondsMinutesHoursAndDays)
{
    EXPECT_DOUBLE_EQ(seconds("30s"), 30);
    EXPECT_DOUBLE_EQ(seconds("90m"), 5400);
    EXPECT_DOUBLE_EQ(seconds("1h"), 3600);
    EXPECT_DOUBLE_EQ(seconds("0.5h"), 1800);
    EXPECT_DOUBLE_EQ(seconds("2d"), 172800);
    EXPECT_DOUBLE_EQ(seconds("1h30m"), 5400);
    EXPECT_DOUBLE_EQ(seconds("1d2h3m4s"), 93784);
    EXPECT_DOUBLE_EQ(seconds("365d"), k_longest_seconds);
    EXPECT_DOUBLE_EQ(seconds("0s", true), 0);
}

TEST(Duration, WhatIsNotADurationSaysHowToWriteOne)
{
    EXPECT_EQ(duration_error("5x"), "'5x' is not a duration (use 30s, 90m, 1h or 2d)");
    for (const auto* bad : {"", "nan", "inf", "-inf", "NaN", "infinity", " 1", "1 ", "1 h", "h",
                            "1H", "0x10", "+1", "1h-30m", "1h30", "1hh", "1.5.2", "ten"}) {
        EXPECT_NE(duration_error(bad, true).find("is not a duration (use 30s"), std::string::npos)
            << "'" << bad << "': " << duration_error(bad, true);
    }
}

TEST(Duration, TheRangeIsSaidInWords)
{
    EXPECT_EQ(duration_error("0"), "must be more than 0 s, not '0'");
    EXPECT_EQ(duration_error("0m"), "must be more than 0 s, not '0m'");
    EXPECT_EQ(duration_error("-1"), "must be more than 0 s, not '-1'");
    EXPECT_EQ(duration_error("-1h", true), "must be at least 0 s, not '-1h'");
    EXPECT_EQ(duration_error("1e10"), "must be at most a year (365d), not '1e10'");
    EXPECT_EQ(duration_error("366d"), "must be at most a year (365d), not '366d'");
    EXPECT_EQ(duration_error("1e400"), "must be at most a year (365d), not '1e400'")
        << "never a 309-digit range";
    EXPECT_EQ(duration_error("100", false, 60), "must be at most 60 s, not '100'");
}

TEST(Duration, AVeryLongValueIsCutShortInTheMessage)
{
    const std::string digits(400, '9');
    const auto message = duration_error(digits);
    EXPECT_LT(message.size(), 150u) << message;
    EXPECT_NE(message.find("(400 characters)"), std::string::npos) << message;
}

TEST(Duration, OptionErrorsReadAsASentence)
{
    EXPECT_EQ(option_error("--timeout", "must be more than 0 s, not '0'"),
              "--timeout must be more than 0 s, not '0'");
    EXPECT_EQ(option_error("--timeout", "'5x' is not a duration (use 30s, 90m, 1h or 2d)"),
              "--timeout: '5x' is not a duration (use 30s, 90m, 1h or 2d)");
}

} // namespace
} // namespace gpusched
