#include <gpusched/job_messages.hpp>

#include <gtest/gtest.h>

#include <csignal>

namespace gpusched {
namespace {

using namespace std::chrono_literals;

TEST(JobMessages, DescribesExitCodesAndSignals)
{
    EXPECT_EQ(describe_outcome(JobOutcome{0, 0}), "exit 0");
    EXPECT_EQ(describe_outcome(JobOutcome{3, 0}), "exit 3");
    EXPECT_EQ(describe_outcome(JobOutcome{0, SIGKILL}), "killed by SIGKILL");
}

TEST(JobMessages, ShortensLongCommandsOnly)
{
    EXPECT_EQ(shorten_command("python train.py"), "python train.py");
    const std::string long_command(1000, 'x');
    const auto shown = shorten_command(long_command);
    EXPECT_EQ(shown, std::string(240, 'x') + "... (760 more bytes)");
}

TEST(JobMessages, FormatsDurations)
{
    EXPECT_EQ(format_duration(1520ms), "1.520 s");
    EXPECT_EQ(format_duration(123s), "2 min 03 s");
    EXPECT_EQ(format_duration(2h + 5min), "2 h 05 min");
}

TEST(JobMessages, ProgressShowsCountsAndAnEtaOnceTheInputHasEnded)
{
    ProgressSnapshot progress;
    progress.succeeded = 10;
    progress.failed = 2;
    progress.running = 4;
    progress.queued = 8;
    progress.slots = 4;
    progress.elapsed = 83s;
    progress.busy = 120s;
    progress.attempts = 12; // 10 s per attempt
    EXPECT_EQ(format_progress(progress),
              "12 done (2 failed), 4 running, 8+ queued, 1 min 23 s elapsed");
    progress.input_ended = true;
    // 12 jobs left on 4 GPUs: three rounds of 10 s.
    EXPECT_EQ(format_progress(progress),
              "12 done (2 failed), 4 running, 8 queued, 1 min 23 s elapsed, ETA 30.000 s");
    progress.cancelled = 1;
    EXPECT_EQ(format_progress(progress).substr(0, 36), "13 done (2 failed, 1 cancelled), 4 r");
    progress.failed = 0;
    EXPECT_EQ(format_progress(progress).substr(0, 24), "11 done (1 cancelled), 4");
}

} // namespace
} // namespace gpusched
