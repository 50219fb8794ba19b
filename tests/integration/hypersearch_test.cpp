// gpusched hypersearch as users run it: on the command line, under its old name, in pipes.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace gpusched::testing {
namespace {

Finished hypersearch(const TempDir& dir, std::vector<std::string> args)
{
    args.insert(args.begin(), "hypersearch");
    return run(dir, {args});
}

// Runs a bash pipeline with pipefail, with $GPUSCHED naming the binary under test.
Finished pipeline(const TempDir& dir, const std::string& script)
{
    return run(dir, {{"-c", "set -o pipefail; " + script},
                     std::nullopt,
                     std::nullopt,
                     {{"GPUSCHED", binary().string()}},
                     fs::path("/bin/bash")});
}

TEST(HypersearchCli, PrintsTheGridInOrder)
{
    TempDir dir;
    const auto result = hypersearch(dir, {"train --lr {lr} --bs {bs}", "-p", "lr", "0.1", "0.01",
                                          "-p", "bs", "32", "64", "--sampling-mode", "grid"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(split_lines(result.out),
              (std::vector<std::string>{"train --lr 0.1 --bs 32", "train --lr 0.1 --bs 64",
                                        "train --lr 0.01 --bs 32", "train --lr 0.01 --bs 64"}));
}

TEST(HypersearchCli, ValuesMayLookLikeOptions)
{
    TempDir dir;
    const auto result = hypersearch(dir, {"run {flag} {n}", "-p", "flag", "--no-augment", "-x",
                                          "-p", "n", "-1", "--sampling-mode=grid"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(split_lines(result.out),
              (std::vector<std::string>{"run --no-augment -1", "run -x -1"}));
}

// Values go in as given, as simple_hypersearch inserts them; those the shell would read as
// more than one word are named once, with the --quote that makes each one word.
TEST(HypersearchCli, ValuesTheShellSplitsOrCannotParseAreNamedOnce)
{
    TempDir dir;
    const auto plain = hypersearch(
        dir, {"echo {name}", "-p", "name", "run a", "it's", "ok", "--sampling-mode", "grid"});
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    EXPECT_EQ(plain.out, "echo run a\necho it's\necho ok\n");
    EXPECT_EQ(count_lines_with(plain.err, "2 values the shell reads as more than one plain "
                                          "word, inserted as given: name='run a', "
                                          "name='it'\\''s'; --quote inserts each value as one "
                                          "word"),
              1u)
        << plain.err;
    const auto quoted = hypersearch(dir, {"echo {name}", "-p", "name", "run a", "it's", "ok",
                                          "--sampling-mode", "grid", "--quote"});
    ASSERT_EQ(quoted.exit_status, 0) << quoted.err;
    EXPECT_EQ(quoted.err, "");
    // Each line is now one command the shell runs as meant.
    for (const auto& line : split_lines(quoted.out)) {
        const auto ran = run(dir, {{"-c", line}, {}, {}, {}, fs::path("/bin/sh")});
        EXPECT_EQ(ran.exit_status, 0) << line << ": " << ran.err;
    }
    const auto plain_words =
        hypersearch(dir, {"echo {lr}", "-p", "lr", "0.1", "range:1:3", "--sampling-mode", "grid"});
    EXPECT_EQ(plain_words.err, "") << "numbers and ranges need no quoting";
}

TEST(HypersearchCli, SeededShuffleIsIdenticalAcrossRuns)
{
    TempDir dir;
    const std::vector<std::string> args = {"t {a} {b}",      "-p",     "a", "range:0:20", "-p", "b",
                                           "linspace:0:1:5", "--seed", "42"};
    const auto first = hypersearch(dir, args);
    const auto second = hypersearch(dir, args);
    ASSERT_EQ(first.exit_status, 0) << first.err;
    EXPECT_EQ(first.out, second.out);
    const auto all = split_lines(first.out);
    EXPECT_EQ(all.size(), 100u);
    EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 100u);
}

TEST(HypersearchCli, RunsAsSimpleHypersearch)
{
    TempDir dir;
    const auto result = run(dir, {{"echo {x}", "-p", "x", "1", "--sampling-mode", "grid"},
                                  std::nullopt,
                                  std::nullopt,
                                  {},
                                  binary().parent_path() / "simple_hypersearch"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "echo 1\n");
}

TEST(HypersearchCli, ErrorsExitWithTwoAndNameTheCulprit)
{
    TempDir dir;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"echo {x} {y}", "-p", "x", "1"}, "placeholder {y} has no values"},
        {{"echo {x}", "-p", "x", "1", "-p", "z", "2"}, "parameter 'z' is not used"},
        {{"echo {x}", "-p", "x", "1", "-p", "x", "2"}, "parameter 'x' is given twice"},
        {{"echo {x}", "-p", "x"}, "parameter 'x' has no values"},
        {{"echo {x}"}, "no parameters"},
        {{"echo {x}", "-p", "x", "1", "--n-samples", "0"},
         "--n-samples: 0 is out of range: must be a whole number at least 1"},
        {{"echo {x}", "-p", "x", "range:3:1"}, "parameter 'x': 'range:3:1' holds no value"},
        {{"echo {x}", "-p", "x", "1", "--sampling-mode", "sideways"}, "sideways"},
    };
    for (const auto& [args, message] : cases) {
        const auto result = hypersearch(dir, args);
        EXPECT_EQ(result.exit_status, 255) << message;
        EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    }
}

TEST(HypersearchCli, ClosedStdoutEndsQuietly)
{
    TempDir dir;
    const auto result = pipeline(
        dir, "\"$GPUSCHED\" hypersearch 'x {a} {b}' -p a range:0:1000 -p b range:0:1000 | head -1");
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(split_lines(result.out).size(), 1u);
    EXPECT_EQ(split_lines(result.err).size(), 1u) << "only the seed: " << result.err;
    EXPECT_EQ(result.err.rfind("gpusched hypersearch: seed ", 0), 0u) << result.err;
}

TEST(HypersearchCli, SaysTheSeedItChoseSoTheOrderCanBeHadAgain)
{
    TempDir dir;
    const std::vector<std::string> args = {"t {a}", "-p", "a", "range:0:50"};
    const auto chosen = hypersearch(dir, args);
    ASSERT_EQ(chosen.exit_status, 0) << chosen.err;
    const std::string said = "gpusched hypersearch: seed ";
    ASSERT_EQ(chosen.err.rfind(said, 0), 0u) << chosen.err;
    const auto seed =
        chosen.err.substr(said.size(), chosen.err.find(' ', said.size()) - said.size());
    EXPECT_NE(chosen.err.find("(--seed " + seed + " gives this order again)"), std::string::npos)
        << chosen.err;

    auto again_args = args;
    again_args.insert(again_args.end(), {"--seed", seed});
    const auto again = hypersearch(dir, again_args);
    ASSERT_EQ(again.exit_status, 0) << again.err;
    EXPECT_EQ(again.out, chosen.out);
    EXPECT_EQ(again.err, "") << "no seed to tell when it was given";

    auto grid_args = args;
    grid_args.insert(grid_args.end(), {"--sampling-mode", "grid"});
    EXPECT_EQ(hypersearch(dir, grid_args).err, "") << "a grid's order needs no seed";
}

TEST(HypersearchCli, EveryConfigurationRunsOnceThroughTheScheduler)
{
    TempDir dir;
    const auto record = (dir / "runs").string();
    const auto result = pipeline(
        dir,
        fmt::format("\"$GPUSCHED\" hypersearch 'echo {{lr}} {{bs}} $CUDA_VISIBLE_DEVICES >> {}' "
                    "-p lr logspace:0.001:0.1:3 -p bs 16 32 | \"$GPUSCHED\" -q --gpus 0,1,2",
                    record));
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::multiset<std::string> configurations;
    for (const auto& line : split_lines(read_file(record))) {
        configurations.insert(line.substr(0, line.rfind(' ')));
    }
    EXPECT_EQ(configurations, (std::multiset<std::string>{"0.001 16", "0.001 32", "0.01 16",
                                                          "0.01 32", "0.1 16", "0.1 32"}));
}

} // namespace
} // namespace gpusched::testing
