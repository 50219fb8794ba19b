#include <gpusched/errors.hpp>
#include <gpusched/result.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {
namespace {

Result<int> half(int number)
{
    if (number % 2 != 0) {
        return Failure{std::to_string(number) + " is odd"};
    }
    return number / 2;
}

Result<void> check_even(int number)
{
    if (auto halved = half(number); !halved) {
        return halved.failure();
    }
    return {};
}

TEST(Result, HoldsTheValueOrTheFailure)
{
    const auto four = half(8);
    ASSERT_TRUE(four.ok());
    EXPECT_TRUE(static_cast<bool>(four));
    EXPECT_EQ(*four, 4);
    EXPECT_EQ(four.value(), 4);

    const auto odd = half(3);
    ASSERT_FALSE(odd.ok());
    EXPECT_FALSE(static_cast<bool>(odd));
    EXPECT_EQ(odd.message(), "3 is odd");
    EXPECT_EQ(odd.failure().message, "3 is odd");
}

TEST(Result, OfVoidIsDoneOrTheFailure)
{
    EXPECT_TRUE(check_even(2).ok());
    const auto odd = check_even(5);
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.message(), "5 is odd");
}

TEST(Result, IsMadeFromWhatItsValueIsMadeOf)
{
    const auto none = []() -> Result<std::optional<std::vector<std::string>>> {
        return std::nullopt;
    }();
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());

    const auto text = []() -> Result<std::string> { return "made of a literal"; }();
    EXPECT_EQ(*text, "made of a literal");
}

TEST(Result, MovesAValueThatCannotBeCopied)
{
    Result<std::unique_ptr<int>> owned = std::make_unique<int>(7);
    ASSERT_TRUE(owned.ok());
    const auto taken = std::move(owned).value();
    EXPECT_EQ(*taken, 7);
}

TEST(Result, AFailureOfASystemCallCarriesItsErrno)
{
    const Result<int> refused = Failure{"/bin/sh: Resource temporarily unavailable", EAGAIN};
    EXPECT_EQ(refused.failure().error, EAGAIN);
    EXPECT_EQ(Result<int>(Failure{"7 is odd"}).failure().error, 0) << "none where none was";
}

TEST(Result, AFailureIsOfNoParticularKindUnlessItSays)
{
    EXPECT_EQ(Failure{"7 is odd"}.kind, FailureKind::other);
    EXPECT_EQ(Failure("/bin/sh: Resource temporarily unavailable", EAGAIN).kind,
              FailureKind::other);
    EXPECT_EQ(Result<int>(Failure{"7 is odd"}).kind(), FailureKind::other);
}

TEST(Result, AFailureCarriesItsKindToWhoeverDecidesByIt)
{
    const Result<int> missing = Failure{FailureKind::not_found, "no job 12"};
    EXPECT_EQ(missing.kind(), FailureKind::not_found);
    EXPECT_EQ(missing.message(), "no job 12");
    EXPECT_EQ(missing.failure().error, 0);

    const Result<void> timed_out = Failure{FailureKind::unreachable, "no answer", ETIMEDOUT};
    EXPECT_EQ(timed_out.kind(), FailureKind::unreachable);
    EXPECT_EQ(timed_out.failure().error, ETIMEDOUT);

    // Passed on whole, as a caller hands a failure up.
    const auto passed = [&]() -> Result<std::string> { return timed_out.failure(); }();
    EXPECT_EQ(passed.kind(), FailureKind::unreachable);
    EXPECT_EQ(passed.message(), "no answer");
}

TEST(Result, ValueOrUsageErrorThrowsTheFailureForTheUser)
{
    EXPECT_EQ(value_or_usage_error(half(10)), 5);
    try {
        value_or_usage_error(half(7));
        FAIL() << "no UsageError";
    } catch (const UsageError& error) {
        EXPECT_STREQ(error.what(), "7 is odd");
    }
}

} // namespace
} // namespace gpusched
