// Numbers from the command line, the environment and files are checked: nan, inf, values too
// large to count in and negative whole numbers are usage errors that name the value and the
// accepted range, never a run with a timeout of a millisecond or a report that never ends.
#include "harness.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

void expect_refused(const TempDir& dir, LaunchOptions options,
                    const std::vector<std::string>& wanted)
{
    const auto args = fmt::format("{}", fmt::join(options.args, " "));
    const auto result = run(dir, std::move(options), 20s);
    EXPECT_FALSE(result.timed_out) << args;
    EXPECT_EQ(result.exit_status, 255) << args << "\n" << result.err;
    EXPECT_EQ(result.err.rfind("gpusched: error: ", 0), 0u) << args << "\n" << result.err;
    for (const auto& text : wanted) {
        EXPECT_NE(result.err.find(text), std::string::npos) << args << ": no '" << text << "' in\n"
                                                            << result.err;
    }
}

std::string not_a_duration(const std::string& option, const std::string& value)
{
    return option + ": '" + value + "' is not a duration (use 30s, 90m, 1h or 2d)";
}

TEST(Numbers, DurationsMustBeDurationsOfAtMostAYear)
{
    TempDir dir;
    for (const std::string option : {"--timeout", "--kill-after", "--recheck", "--probe-timeout"}) {
        const auto args = [&](const std::string& value) {
            std::vector<std::string> words = {"--gpus", "0", option, value};
            if (option == "--recheck") {
                words.push_back("--skip-busy");
            }
            return words;
        };
        for (const std::string value : {"1e10", "31536001", "1e400", "366d"}) {
            expect_refused(dir, {args(value), "true\n"},
                           {option + " must be at most a year (365d), not '" + value + "'"});
        }
        for (const std::string value : {"nan", "inf", "ten", "5x", "1h30"}) {
            expect_refused(dir, {args(value), "true\n"}, {not_a_duration(option, value)});
        }
        expect_refused(dir, {args("-1"), "true\n"}, {option + " must be ", " 0 s, not '-1'"});
    }
    expect_refused(dir, {{"--gpus", "0", "--timeout", "0"}, "true\n"},
                   {"--timeout must be more than 0 s, not '0'"});
    expect_refused(dir, {{"--gpus", "0", "--kill-after", "-1m"}, "true\n"},
                   {"--kill-after must be at least 0 s, not '-1m'"});
}

TEST(Numbers, DurationsFromTheEnvironmentAreCheckedToo)
{
    TempDir dir;
    expect_refused(dir, {{"--gpus", "0"}, "true\n", std::nullopt, {{"GPUSCHED_TIMEOUT", "nan"}}},
                   {not_a_duration("--timeout", "nan")});
    expect_refused(dir,
                   {{"--gpus", "0"}, "true\n", std::nullopt, {{"GPUSCHED_KILL_AFTER", "1e300"}}},
                   {"--kill-after must be at most a year (365d), not '1e300'"});
}

TEST(Numbers, DurationsTakeUnits)
{
    TempDir dir;
    const auto result =
        run(dir,
            {{"--gpus", "0", "--timeout", "365d", "--kill-after", "0s", "--probe-timeout", "1m30s"},
             "echo ran\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "ran\n");
    // 0.005m is 0.3 s: the job is stopped then, as --timeout 0.3 would stop it.
    const auto stopped = run(
        dir, {{"--gpus", "0", "--timeout", "0.005m", "--kill-after", "0.5s"}, "sleep 30\n"}, 20s);
    EXPECT_EQ(stopped.exit_status, 1) << stopped.err;
    EXPECT_NE(stopped.err.find("(timed out)"), std::string::npos) << stopped.err;
}

TEST(Numbers, ALongTimeoutLetsJobsRun)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "0", "--timeout", "31536000", "--kill-after", "0"}, "echo ran\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "ran\n");
}

TEST(Numbers, ExecAndWorkerDurationsAreChecked)
{
    TempDir dir;
    expect_refused(dir, {{"exec", "--gpus", "0", "--timeout", "nan", "--", "true"}},
                   {not_a_duration("--timeout", "nan")});
    expect_refused(dir, {{"exec", "--gpus", "0", "--timeout", "1e10", "--", "true"}},
                   {"--timeout must be at most a year", "1e10"});
    expect_refused(dir, {{"worker", "--gpus", "0", "--lease-timeout", "inf"}},
                   {not_a_duration("--lease-timeout", "inf")});
    expect_refused(dir, {{"worker", "--gpus", "0", "--lease-timeout", "0m"}},
                   {"--lease-timeout must be more than 0 s, not '0m'"});
    expect_refused(dir, {{"gpus", "--gpus", "0", "--probe-timeout", "nan"}}, {"--probe-timeout"});
    expect_refused(dir, {{"status", "--gpus", "0", "--probe-timeout", "-5"}},
                   {"--probe-timeout must be more than 0 s, not '-5'"});
    expect_refused(dir, {{"submit", "--redis", "redis://127.0.0.1:1", "--connect-timeout", "2x"}},
                   {not_a_duration("--connect-timeout", "2x")});
}

TEST(Numbers, WholeNumbersAreDecimalAndInRange)
{
    TempDir dir;
    expect_refused(dir, {{"--gpus", "0", "--skip-busy", "--max-used-mib", "-1"}, "true\n"},
                   {"--max-used-mib", "-1 is not a whole number"});
    expect_refused(dir, {{"--gpus", "0", "--jobs-per-gpu", "100000"}, "true\n"},
                   {"--jobs-per-gpu", "100000 is out of range", "from 1 to 1000"});
    expect_refused(dir, {{"--gpus", "0", "--retries", "0x10"}, "true\n"},
                   {"--retries", "0x10 is not a whole number", "from 0 to 1000"});
    expect_refused(dir, {{"--gpus", "0", "--gpus-per-job", "0"}, "true\n"}, {"--gpus-per-job"});
    expect_refused(dir, {{"exec", "--gpus", "0", "-n", "1.5", "--", "true"}}, {"--count", "1.5"});
    expect_refused(dir, {{"queue", "--failures", "-3"}}, {"--failures", "-3"});
    expect_refused(dir, {{"hypersearch", "echo {x}", "-p", "x", "1", "--seed", "-1"}},
                   {"--seed", "-1 is not a whole number"});
    expect_refused(dir, {{"hypersearch", "echo {x}", "-p", "x", "1", "-n", "1e3"}},
                   {"--n-samples", "1e3 is not a whole number", "at least 1"});

    const auto retries = run(dir, {{"--gpus", "0", "--retries", "010"}, "false\n"});
    EXPECT_EQ(retries.exit_status, 1) << retries.err;
    EXPECT_NE(retries.err.find("attempt 11"), std::string::npos) << "010 is ten, not octal";
}

TEST(Numbers, HaltLimitsAreCountsOrFinitePercentages)
{
    TempDir dir;
    for (const std::string halt :
         {"now,fail=nan", "now,fail=inf%", "now,fail=1.5", "soon,done=-1"}) {
        expect_refused(dir, {{"--gpus", "0", "--halt", halt}, "true\n"}, {"bad --halt", halt});
    }
}

std::string joblog_with(const std::string& start, const std::string& runtime,
                        const std::string& exit_value = "0", const std::string& signal = "0")
{
    return "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\tGPU\n"
           "1\t:\t1700000000.000\t1.000\t0\t0\t0\t0\ttrue\t0\n" +
           fmt::format("2\t:\t{}\t{}\t0\t0\t{}\t{}\ttrue\t1\n", start, runtime, exit_value, signal);
}

TEST(Numbers, JoblogNumbersAreChecked)
{
    TempDir dir;
    const auto log = dir / "joblog";
    const auto svg = (dir / "timeline.svg").string();
    write_file(log, joblog_with("1e308", "1e308"));
    expect_refused(dir, {{"report", log.string(), "--svg", svg}},
                   {":3: not a job log record: bad Starttime '1e308'", "before the year 2100"});
    write_file(log, joblog_with("1700000001", "inf"));
    expect_refused(dir, {{"report", log.string(), "--svg", svg}},
                   {":3: not a job log record: bad JobRuntime 'inf'"});
    write_file(log, joblog_with("1700000001", "nan"));
    expect_refused(dir, {{"report", log.string()}}, {"bad JobRuntime 'nan'"});
    write_file(log, joblog_with("1700000001", "1", "300"));
    expect_refused(dir, {{"report", log.string()}}, {"bad Exitval '300': must be from -2 to 255"});
    write_file(log, joblog_with("1700000001", "1", "0", "-9"));
    expect_refused(dir, {{"--gpus", "0", "--joblog", log.string(), "--resume"}, "true\n"},
                   {"bad Signal '-9': must be from 0 to 127"});
}

TEST(Numbers, AReportOfALongSpanEnds)
{
    TempDir dir;
    const auto log = dir / "joblog";
    write_file(log, joblog_with("4102444000", "3000000000", "-1"));
    const auto result =
        run(dir, {{"report", log.string(), "--svg", (dir / "t.svg").string()}}, 20s);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(read_file(dir / "t.svg").find("</svg>"), std::string::npos);
}

} // namespace
} // namespace gpusched::testing
