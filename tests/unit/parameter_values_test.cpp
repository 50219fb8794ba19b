#include <gpusched/parameter_values.hpp>

#include <gtest/gtest.h>

#include <set>

namespace gpusched {
namespace {

using Strings = std::vector<std::string>;

Strings values_of(const Strings& specs)
{
    auto parsed = ValueList::parse("p", specs);
    if (!parsed) {
        ADD_FAILURE() << parsed.message();
        return {};
    }
    const auto& list = *parsed;
    Strings values;
    std::string scratch;
    for (std::uint64_t i = 0; i < list.size(); ++i) {
        values.emplace_back(list.at(i, scratch));
    }
    return values;
}

std::string values_error(const Strings& specs)
{
    auto parsed = ValueList::parse("p", specs);
    return parsed ? "(no error)" : parsed.message();
}

TEST(ValueList, PlainValuesPassThrough)
{
    EXPECT_EQ(values_of({"0.001", "--flag", "-1", "a b"}),
              (Strings{"0.001", "--flag", "-1", "a b"}));
}

TEST(ValueList, IntegerRanges)
{
    EXPECT_EQ(values_of({"range:0:4"}), (Strings{"0", "1", "2", "3"}));
    EXPECT_EQ(values_of({"range:1:10:3"}), (Strings{"1", "4", "7"}));
    EXPECT_EQ(values_of({"range:5:0:-2"}), (Strings{"5", "3", "1"}));
    EXPECT_EQ(values_of({"range:-2:1"}), (Strings{"-2", "-1", "0"}));
}

TEST(ValueList, HugeRangesCostNoMemory)
{
    auto parsed = ValueList::parse("p", {"range:0:1000000000000"});
    const auto& list = *parsed;
    EXPECT_EQ(list.size(), 1000000000000u);
    std::string scratch;
    EXPECT_EQ(list.at(999999999999u, scratch), "999999999999");
}

TEST(ValueList, Linspace)
{
    EXPECT_EQ(values_of({"linspace:0:1:5"}), (Strings{"0", "0.25", "0.5", "0.75", "1"}));
    EXPECT_EQ(values_of({"linspace:0:1:11"})[3], "0.3") << "no rounding noise";
    EXPECT_EQ(values_of({"linspace:2:2:1"}), (Strings{"2"}));
    EXPECT_EQ(values_of({"linspace:1:0:3"}), (Strings{"1", "0.5", "0"}));
}

TEST(ValueList, Logspace)
{
    EXPECT_EQ(values_of({"logspace:0.001:1:4"}), (Strings{"0.001", "0.01", "0.1", "1"}));
    EXPECT_EQ(values_of({"logspace:1:100:3"}), (Strings{"1", "10", "100"}));
}

TEST(ValueList, PiecesConcatenate)
{
    EXPECT_EQ(values_of({"a", "range:0:2", "linspace:5:6:2", "b"}),
              (Strings{"a", "0", "1", "5", "6", "b"}));
}

TEST(ValueList, BadSpecsNameTheParameterAndValue)
{
    EXPECT_NE(values_error({"range:0"}).find("parameter 'p': bad value 'range:0'"),
              std::string::npos);
    EXPECT_NE(values_error({"range:0:5:0"}).find("STEP not 0"), std::string::npos);
    EXPECT_NE(values_error({"range:a:5"}).find("bad value"), std::string::npos);
    EXPECT_NE(values_error({"range:5:5"}).find("holds no value"), std::string::npos);
    EXPECT_NE(values_error({"range:0:5:-1"}).find("holds no value"), std::string::npos);
    EXPECT_NE(values_error({"linspace:0:1:0"}).find("N >= 1"), std::string::npos);
    EXPECT_NE(values_error({"linspace:0:1"}).find("bad value"), std::string::npos);
    EXPECT_NE(values_error({"logspace:0:1:3"}).find("A, B > 0"), std::string::npos);
    EXPECT_NE(values_error({"linspace:0:inf:3"}).find("bad value"), std::string::npos);
    EXPECT_NE(values_error({"uniform:0:1"}).find("random only"), std::string::npos);
    EXPECT_NE(values_error({}).find("has no values"), std::string::npos);
}

TEST(FormatNumber, ShortestExactForm)
{
    EXPECT_EQ(format_number(0.001), "0.001");
    EXPECT_EQ(format_number(3.0), "3");
    EXPECT_EQ(format_number(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(format_number(-2.5), "-2.5");
}

TEST(RandomParameter, DrawsAreReproducibleAndInRange)
{
    auto parsed = RandomParameter::parse("lr", {"loguniform:0.0001:0.1"});
    const auto& lr = *parsed;
    std::mt19937_64 first(42);
    std::mt19937_64 second(42);
    std::string scratch;
    for (int i = 0; i < 1000; ++i) {
        const std::string a(lr.draw(first, scratch));
        const std::string b(lr.draw(second, scratch));
        EXPECT_EQ(a, b);
        const double value = std::stod(a);
        EXPECT_GE(value, 0.0001);
        EXPECT_LT(value, 0.1);
    }
}

TEST(RandomParameter, RandIntIncludesBothEnds)
{
    auto parsed = RandomParameter::parse("k", {"randint:1:3"});
    const auto& k = *parsed;
    std::mt19937_64 engine(7);
    std::string scratch;
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
        seen.emplace(k.draw(engine, scratch));
    }
    EXPECT_EQ(seen, (std::set<std::string>{"1", "2", "3"}));
}

TEST(RandomParameter, ChoicesComeFromTheList)
{
    auto parsed = RandomParameter::parse("opt", {"adam", "sgd", "range:0:2"});
    const auto& opt = *parsed;
    std::mt19937_64 engine(1);
    std::string scratch;
    std::set<std::string> seen;
    for (int i = 0; i < 400; ++i) {
        seen.emplace(opt.draw(engine, scratch));
    }
    EXPECT_EQ(seen, (std::set<std::string>{"adam", "sgd", "0", "1"}));
}

TEST(RandomParameter, BadDistributions)
{
    for (const auto& spec : {"uniform:1:1", "uniform:2:1", "uniform:a:1", "loguniform:0:1",
                             "randint:3:1", "randint:1.5:3", "uniform:0:1:2"}) {
        EXPECT_FALSE(RandomParameter::parse("x", {spec}).ok()) << spec;
    }
    EXPECT_TRUE(!RandomParameter::parse("x", {"uniform:0:1", "3"}).ok());
}

TEST(UniformBelow, CoversTheRange)
{
    std::mt19937_64 engine(3);
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 300; ++i) {
        const auto value = uniform_below(engine, 5);
        EXPECT_LT(value, 5u);
        seen.insert(value);
    }
    EXPECT_EQ(seen.size(), 5u);
}

} // namespace
} // namespace gpusched
