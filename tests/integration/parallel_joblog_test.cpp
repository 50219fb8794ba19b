// A job log read and written both ways with the real GNU parallel: its --resume,
// --resume-failed and --retry-failed on a log gpusched wrote, and gpusched's on one it wrote.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>

namespace gpusched::testing {
namespace {

bool parallel_installed()
{
    return std::system("parallel --version > /dev/null 2>&1") == 0;
}

#define SKIP_WITHOUT_PARALLEL()                                                                    \
    if (!parallel_installed()) {                                                                   \
        GTEST_SKIP() << "GNU parallel is not installed (apt-get install parallel)";                \
    }

// GNU parallel itself, on `input`, with `args`; --will-cite keeps its notice out of the way.
Finished run_parallel(const TempDir& dir, const std::string& args, const std::string& input = "")
{
    LaunchOptions options{{"-c", "exec parallel --will-cite " + args}, input};
    options.program = "/bin/sh";
    return run(dir, options);
}

// A command that notes `name` in ran, then succeeds once the file `fixed` exists.
std::string flaky(const TempDir& dir, const std::string& name)
{
    return fmt::format("echo {1} >> {0}/ran; test -e {0}/fixed", dir.path().string(), name);
}

std::string note(const TempDir& dir, const std::string& name)
{
    return fmt::format("echo {1} >> {0}/ran", dir.path().string(), name);
}

TEST(GnuParallel, RetryFailedRunsTheFailedCommandsOfAGpuschedLogAsTheyWere)
{
    SKIP_WITHOUT_PARALLEL();
    TempDir dir;
    const auto joblog = (dir / "jobs.log").string();
    const auto input = join_lines({note(dir, "one"), flaky(dir, "two"), flaky(dir, "three")});
    const auto first = run(dir, {{"--gpus", "0,1", "--joblog", joblog}, input});
    EXPECT_NE(first.exit_status, 0) << first.err;

    write_file(dir / "fixed", "");
    // Extra words after a command (a GPU column) would reach `test` and fail it again.
    const auto retried = run_parallel(dir, "--retry-failed --joblog " + joblog);
    EXPECT_EQ(retried.exit_status, 0) << retried.out << retried.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran.at("one"), 1);
    EXPECT_EQ(ran.at("two"), 2);
    EXPECT_EQ(ran.at("three"), 2);

    // The log, with parallel's records appended, tells gpusched that everything is done.
    const auto resumed = run(dir, {{"--gpus", "0", "--joblog", joblog, "--resume-failed"}, input});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_TRUE(has(resumed.err, "3 skipped as done in the job log")) << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran").at("two"), 2);
}

TEST(GnuParallel, ResumeFailedRunsAgainAJobAStopInterruptedThatExitedZero)
{
    SKIP_WITHOUT_PARALLEL();
    TempDir dir;
    const auto joblog = (dir / "jobs.log").string();
    const auto caught = fmt::format("echo caught >> {0}/ran; trap 'exit 0' TERM; "
                                    "test -e {0}/fast || {{ sleep 30 & wait; }}",
                                    dir.path().string());
    const auto input = join_lines({note(dir, "one"), caught});
    Process first(dir, {{"--gpus", "0,1", "--joblog", joblog}, input});
    // Stop only once "one" has ended and is in the log: a stop that cuts it short would
    // rightly make it run again.
    ASSERT_TRUE(eventually([&] {
        return line_counts(dir / "ran").size() == 2 && joblog_records(joblog).size() == 1;
    }));
    first.signal(SIGTERM);
    EXPECT_EQ(first.wait().exit_status, 128 + SIGTERM);

    write_file(dir / "fast", "");
    const auto resumed = run_parallel(dir, "--resume-failed --joblog " + joblog, input);
    EXPECT_EQ(resumed.exit_status, 0) << resumed.out << resumed.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran.at("one"), 1) << "a job that succeeded is done";
    EXPECT_EQ(ran.at("caught"), 2) << "a job the stop cut short is not, whatever it returned";
}

TEST(GnuParallel, ResumeNumbersJobsAsGpuschedDoes)
{
    SKIP_WITHOUT_PARALLEL();
    TempDir dir;
    const auto joblog = (dir / "jobs.log").string();
    const std::vector<std::string> commands = {note(dir, "one"), note(dir, "two"),
                                               note(dir, "three")};
    const auto first =
        run(dir, {{"--gpus", "0", "--joblog", joblog}, join_lines({commands[0], commands[1]})});
    EXPECT_EQ(first.exit_status, 0) << first.err;
    const auto resumed = run_parallel(dir, "--resume --joblog " + joblog, join_lines(commands));
    EXPECT_EQ(resumed.exit_status, 0) << resumed.out << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran"),
              (std::map<std::string, int>{{"one", 1}, {"two", 1}, {"three", 1}}));
}

TEST(GnuParallel, GpuschedResumesAndReportsALogParallelWroteInItsOwnColumns)
{
    SKIP_WITHOUT_PARALLEL();
    TempDir dir;
    const auto joblog = dir / "parallel.log";
    // A tab in a command, which parallel writes as it is.
    const auto tabbed = fmt::format("printf 'x\\ty\\n' > {0}/tabbed\t&& echo three >> {0}/ran",
                                    dir.path().string());
    const auto input = join_lines({note(dir, "one"), flaky(dir, "two"), tabbed});
    const auto first = run_parallel(dir, "--joblog " + joblog.string(), input);
    EXPECT_EQ(first.exit_status, 1) << first.out << first.err;

    const auto report = run(dir, {{"report", joblog.string()}});
    EXPECT_EQ(report.exit_status, 0) << report.err;
    EXPECT_TRUE(has(report.out, "3 (2 succeeded, 1 failed)")) << report.out;

    write_file(dir / "fixed", "");
    const auto resumed =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume-failed"}, input});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_FALSE(has(resumed.err, "torn")) << resumed.err;
    EXPECT_TRUE(has(resumed.err, "2 skipped as done in the job log")) << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran"),
              (std::map<std::string, int>{{"one", 1}, {"two", 2}, {"three", 1}}));

    // One header, parallel's, and gpusched's record in the same nine columns.
    const auto lines = split_lines(read_file(joblog));
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                            [](const std::string& line) { return line.starts_with("Seq\t"); }),
              1);
    const auto records = joblog_records(joblog);
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[3].size(), 9u);
    EXPECT_EQ(records[3][0], "2");
    EXPECT_EQ(records[3][1], "gpu=0");

    // And parallel reads it back: nothing is left to run.
    const auto again = run_parallel(dir, "--resume-failed --joblog " + joblog.string(), input);
    EXPECT_EQ(again.exit_status, 0) << again.out << again.err;
    EXPECT_EQ(line_counts(dir / "ran").at("two"), 2);
    const auto last = run(dir, {{"report", joblog.string()}});
    EXPECT_TRUE(has(last.out, "3 (3 succeeded, 0 failed)")) << last.out;
}

} // namespace
} // namespace gpusched::testing
