#include <gpusched/hypersearch.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace gpusched {
namespace {

using Strings = std::vector<std::string>;

HypersearchRequest request(SamplingMode mode, std::optional<std::int64_t> samples = std::nullopt,
                           std::uint64_t seed = 1)
{
    HypersearchRequest request;
    request.command_template = "train --lr {lr} --bs {bs}";
    request.parameters = {{"lr", {"0.1", "0.01"}}, {"bs", {"32", "64", "128"}}};
    request.mode = mode;
    request.samples = samples;
    request.seed = seed;
    return request;
}

Strings lines_of(HypersearchRequest request)
{
    auto created = Hypersearch::create(std::move(request));
    if (!created) {
        ADD_FAILURE() << created.message();
        return {};
    }
    Strings lines;
    created->generate([&](std::string_view line) {
        lines.emplace_back(line);
        return true;
    });
    return lines;
}

std::string request_error(HypersearchRequest request)
{
    auto created = Hypersearch::create(std::move(request));
    return created ? "(no error)" : created.message();
}

const Strings k_grid = {"train --lr 0.1 --bs 32",  "train --lr 0.1 --bs 64",
                        "train --lr 0.1 --bs 128", "train --lr 0.01 --bs 32",
                        "train --lr 0.01 --bs 64", "train --lr 0.01 --bs 128"};

TEST(Hypersearch, GridVariesTheLastParameterFastest)
{
    EXPECT_EQ(lines_of(request(SamplingMode::grid)), k_grid);
}

TEST(Hypersearch, GridFollowsTheParameterOrderNotTheTemplateOrder)
{
    auto swapped = request(SamplingMode::grid);
    std::swap(swapped.parameters[0], swapped.parameters[1]);
    const auto lines = lines_of(swapped);
    EXPECT_EQ(lines[0], "train --lr 0.1 --bs 32");
    EXPECT_EQ(lines[1], "train --lr 0.01 --bs 32");
}

TEST(Hypersearch, ShuffledGridIsAPermutationOfTheGrid)
{
    auto shuffled = lines_of(request(SamplingMode::shuffled_grid));
    EXPECT_NE(shuffled, k_grid);
    std::sort(shuffled.begin(), shuffled.end());
    auto sorted_grid = k_grid;
    std::sort(sorted_grid.begin(), sorted_grid.end());
    EXPECT_EQ(shuffled, sorted_grid);
}

TEST(Hypersearch, SeedMakesTheOutputReproducible)
{
    EXPECT_EQ(lines_of(request(SamplingMode::shuffled_grid, std::nullopt, 7)),
              lines_of(request(SamplingMode::shuffled_grid, std::nullopt, 7)));
    EXPECT_EQ(lines_of(request(SamplingMode::random, 20, 7)),
              lines_of(request(SamplingMode::random, 20, 7)));
    EXPECT_NE(lines_of(request(SamplingMode::random, 20, 7)),
              lines_of(request(SamplingMode::random, 20, 8)));
}

TEST(Hypersearch, SamplesAreTheFirstNAndDistinct)
{
    EXPECT_EQ(lines_of(request(SamplingMode::grid, 2)),
              Strings(k_grid.begin(), k_grid.begin() + 2));
    const auto full = lines_of(request(SamplingMode::shuffled_grid, std::nullopt, 3));
    const auto four = lines_of(request(SamplingMode::shuffled_grid, 4, 3));
    EXPECT_EQ(four, Strings(full.begin(), full.begin() + 4));
    EXPECT_EQ(std::set<std::string>(four.begin(), four.end()).size(), 4u);
    EXPECT_EQ(lines_of(request(SamplingMode::grid, 100)).size(), 6u) << "never more than the grid";
}

TEST(Hypersearch, TenSamplesFromATrillionCombinations)
{
    HypersearchRequest huge;
    huge.command_template = "run {a} {b}";
    huge.parameters = {{"a", {"range:0:1000000"}}, {"b", {"range:0:1000000"}}};
    huge.samples = 10;
    huge.seed = 11;
    const auto lines = lines_of(huge);
    ASSERT_EQ(lines.size(), 10u);
    EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), 10u);
}

TEST(Hypersearch, RandomModeDrawsFromDistributions)
{
    HypersearchRequest random;
    random.command_template = "train --lr {lr} --layers {layers} --opt {opt}";
    random.parameters = {
        {"lr", {"loguniform:1e-5:1e-1"}}, {"layers", {"randint:1:4"}}, {"opt", {"adam", "sgd"}}};
    random.mode = SamplingMode::random;
    random.samples = 50;
    random.seed = 5;
    const auto lines = lines_of(random);
    ASSERT_EQ(lines.size(), 50u);
    EXPECT_GT(std::set<std::string>(lines.begin(), lines.end()).size(), 45u);
    for (const auto& line : lines) {
        EXPECT_EQ(line.rfind("train --lr ", 0), 0u) << line;
    }
}

TEST(Hypersearch, QuoteShellQuotesInsertedValues)
{
    HypersearchRequest quoted;
    quoted.command_template = "echo {msg} '{{literal}}'";
    quoted.parameters = {{"msg", {"it's", "plain"}}};
    quoted.mode = SamplingMode::grid;
    quoted.quote = true;
    EXPECT_EQ(lines_of(quoted), (Strings{"echo 'it'\\''s' '{literal}'", "echo plain '{literal}'"}));
}

TEST(Hypersearch, ErrorsNameTheCulprit)
{
    auto no_parameter = request(SamplingMode::grid);
    no_parameter.parameters.pop_back();
    EXPECT_NE(request_error(no_parameter).find("placeholder {bs} has no values"),
              std::string::npos);

    auto unused = request(SamplingMode::grid);
    unused.parameters.push_back({"wd", {"0"}});
    EXPECT_NE(request_error(unused).find("parameter 'wd' is not used"), std::string::npos);

    auto duplicate = request(SamplingMode::grid);
    duplicate.parameters.push_back({"lr", {"1"}});
    EXPECT_NE(request_error(duplicate).find("parameter 'lr' is given twice"), std::string::npos);

    auto none = request(SamplingMode::grid);
    none.parameters.clear();
    EXPECT_NE(request_error(none).find("no parameters"), std::string::npos);

    auto empty = request(SamplingMode::grid);
    empty.parameters[0].second.clear();
    EXPECT_NE(request_error(empty).find("parameter 'lr' has no values"), std::string::npos);

    EXPECT_NE(
        request_error(request(SamplingMode::grid, 0)).find("--n-samples must be at least 1, not 0"),
        std::string::npos);
    EXPECT_NE(request_error(request(SamplingMode::grid, -2)).find("not -2"), std::string::npos);
    EXPECT_NE(request_error(request(SamplingMode::random)).find("needs --n-samples"),
              std::string::npos);

    auto no_placeholder = request(SamplingMode::grid);
    no_placeholder.command_template = "echo {{lr}}";
    EXPECT_NE(request_error(no_placeholder).find("no {name} placeholder"), std::string::npos);

    HypersearchRequest overflow;
    overflow.command_template = "{a}{b}{c}";
    overflow.parameters = {
        {"a", {"range:0:10000000"}}, {"b", {"range:0:10000000"}}, {"c", {"range:0:10000000"}}};
    EXPECT_NE(request_error(overflow).find("2^64"), std::string::npos);
}

TEST(Hypersearch, StopsWhenTheReaderIsGone)
{
    auto created = Hypersearch::create(request(SamplingMode::grid));
    int calls = 0;
    created->generate([&](std::string_view) { return ++calls < 2; });
    EXPECT_EQ(calls, 2);
}

} // namespace
} // namespace gpusched
