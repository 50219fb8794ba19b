// What the run tells the user about itself, fed as the runner feeds it: the status line's
// timing, the summary's counts, the failed jobs named, the interrupted jobs, the unstarted
// commands. No process runs and no clock is read.
#include <gpusched/sys/run_report.hpp>

#include <gpusched/scheduler.hpp>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <sstream>

namespace gpusched {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class RunReportTest : public ::testing::Test {
protected:
    RunReportTest()
    {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(m_log);
        sink->set_pattern("%l: %v");
        m_previous_logger = spdlog::default_logger();
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("report", sink));
    }
    ~RunReportTest() override { spdlog::set_default_logger(m_previous_logger); }

    std::string log() const { return m_log.str(); }
    bool logged(const std::string& text) const { return log().find(text) != std::string::npos; }

    const Clock::time_point start{10s};
    Scheduler scheduler{GpuPool({"0", "1"}), SchedulerOptions{}};

private:
    std::ostringstream m_log;
    std::shared_ptr<spdlog::logger> m_previous_logger;
};

TEST_F(RunReportTest, NoStatusLineIsDueWhenNoneIsDrawn)
{
    sys::RunReport report(scheduler, {});
    report.changed();
    EXPECT_EQ(report.next_progress_draw(), std::nullopt);
}

TEST_F(RunReportTest, TheStatusLineIsDueSoonAfterAChangeAndEverySecondAnyway)
{
    sys::RunReportOptions options;
    options.progress = std::make_shared<sys::ProgressLine>(STDERR_FILENO);
    sys::RunReport report(scheduler, options);
    const auto quiet = report.next_progress_draw();
    report.changed();
    const auto after_change = report.next_progress_draw();
    ASSERT_TRUE(quiet && after_change);
    EXPECT_EQ(*quiet - *after_change, 900ms);
}

TEST_F(RunReportTest, TheStatusLineSaysWhatAGpuWeWantWaitsFor)
{
    sys::RunReport report(scheduler, {});
    report.on_run_started(start);
    const auto text = report.progress_text(start + 5s, false, "waiting for GPU 1, held by bob");
    EXPECT_NE(text.find("waiting for GPU 1, held by bob"), std::string::npos) << text;
}

TEST_F(RunReportTest, TheSummaryCountsSkippedJobsAndPutOffStartsAndTheBusyTime)
{
    sys::RunReport report(scheduler, {});
    report.on_run_started(start);
    report.on_skipped();
    report.on_start_deferred(true);
    report.on_start_deferred(false);
    report.on_start_deferred(false);
    report.on_attempt(90s);
    report.on_attempt(30s);
    report.report_summary(start + 2min, 0, "");
    EXPECT_TRUE(logged("2 starts put off by a limit on processes")) << log();
    EXPECT_TRUE(logged("1 start put off by a limit on open files")) << log();
    EXPECT_TRUE(logged("1 skipped as done in the job log")) << log();
    EXPECT_EQ(report.busy(), 120s);
}

TEST_F(RunReportTest, OnlyTheFirstTenFailedJobsAreNamedAndTheRestCounted)
{
    sys::RunReportOptions options;
    options.failed_jobs_hint = "see run.joblog";
    sys::RunReport report(scheduler, options);
    for (JobId id = 1; id <= 12; ++id) {
        report.note_failed_job(FailedJob{id, "exit 1", 1, "false\nsecond line", ""});
    }
    report.report_summary(start, 0, "");
    EXPECT_TRUE(logged("failed job 10: exit 1")) << log();
    EXPECT_FALSE(logged("failed job 11")) << log();
    EXPECT_TRUE(logged("and 2 more failed jobs")) << log();
    EXPECT_TRUE(logged("see run.joblog")) << log();
    EXPECT_FALSE(logged("false\nsecond line")) << "a command is named on one line";
}

TEST_F(RunReportTest, AnInterruptedJobIsNamedAfterTheRunAndAFilesIsNotSaved)
{
    sys::RunReport report(scheduler, {});
    report.on_interrupted(3, "1", "train --epochs 3", true);
    EXPECT_TRUE(report.interrupted(3));
    EXPECT_FALSE(report.interrupted(4));
    report.report_unstarted({}, {});
    EXPECT_FALSE(logged("saved in")) << "a file's command is run again by --resume";
    report.report_summary(start, 0, "");
    EXPECT_TRUE(logged("interrupted: job 3 on GPU 1: train --epochs 3")) << log();
}

TEST_F(RunReportTest, ProcessesJobsLeftAreNamedAtTheEndUnlessTheRunWasStopped)
{
    sys::RunReport report(scheduler, {});
    report.report_summary(start, 2, "");
    EXPECT_TRUE(logged("still running (2); they are left to run")) << log();
}

} // namespace
} // namespace gpusched
