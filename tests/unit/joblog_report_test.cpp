#include <gpusched/joblog_report.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <regex>

namespace gpusched {
namespace {

JoblogRecord attempt(JobId seq, const char* gpu, double start, double runtime, int exit_code = 0,
                     int signal = 0, std::string command = "train")
{
    return JoblogRecord{seq, start, runtime, exit_code, signal, std::move(command), gpu};
}

std::size_t count(const std::string& text, const std::string& needle)
{
    std::size_t found = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        ++found;
    }
    return found;
}

const std::vector<JoblogRecord> k_log = {
    attempt(1, "1", 100, 10),       attempt(2, "0", 100, 4, 1), attempt(2, "0", 104, 4),
    attempt(3, "0", 110, 5, 0, 15), attempt(4, "1", 112, 2, 2),
};

TEST(JoblogReport, CountsJobsByTheirLastAttempt)
{
    const auto summary = summarize_joblog(k_log);
    EXPECT_EQ(summary.jobs, 4u);
    EXPECT_EQ(summary.attempts, 5u);
    EXPECT_EQ(summary.succeeded, 2u);
    EXPECT_EQ(summary.failed, 2u);
    EXPECT_EQ(summary.failed_attempts_by_outcome,
              (std::map<std::string, std::size_t>{
                  {"exit 1", 1}, {"exit 2", 1}, {"killed by SIGTERM", 1}}));
    EXPECT_DOUBLE_EQ(summary.total_runtime, 25);
    EXPECT_DOUBLE_EQ(summary.last_end - summary.first_start, 15);
}

TEST(JoblogReport, BusyShareAndLongestIdleGapPerGpu)
{
    const auto summary = summarize_joblog(k_log);
    ASSERT_EQ(summary.gpus.size(), 2u);
    EXPECT_EQ(summary.gpus[0].gpu, "0");
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 13);        // 100-108 and 110-115
    EXPECT_DOUBLE_EQ(summary.gpus[0].longest_idle, 2); // 108-110
    EXPECT_EQ(summary.gpus[1].gpu, "1");
    EXPECT_DOUBLE_EQ(summary.gpus[1].busy, 12);        // 100-110 and 112-114
    EXPECT_DOUBLE_EQ(summary.gpus[1].longest_idle, 2); // 110-112, then 114-115 is shorter
    const auto text = format_summary(summary);
    EXPECT_NE(text.find("jobs      4 (2 succeeded, 2 failed), 5 attempts"), std::string::npos)
        << text;
    EXPECT_NE(text.find("busy  86.7% (3 attempts)"), std::string::npos) << text;
}

TEST(JoblogReport, OverlappingAttemptsOnOneGpuAreCountedOnce)
{
    const auto summary = summarize_joblog({attempt(1, "0", 0, 10), attempt(2, "0", 5, 10)});
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 15);
}

TEST(JoblogReport, AJobOfSeveralGpusKeepsEachBusyAndHasABarOnEach)
{
    const std::vector<JoblogRecord> log = {attempt(1, "0,1", 0, 10), attempt(2, "1", 10, 5)};
    const auto summary = summarize_joblog(log);
    ASSERT_EQ(summary.gpus.size(), 2u);
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 10);
    EXPECT_DOUBLE_EQ(summary.gpus[1].busy, 15);
    EXPECT_EQ(count(render_timeline_svg(log), "<rect class=\"attempt "), 3u);
}

TEST(JoblogReport, GpuRowsFollowIndexOrder)
{
    const auto summary = summarize_joblog({attempt(1, "10", 0, 1), attempt(2, "GPU-b", 0, 1),
                                           attempt(3, "2", 0, 1), attempt(4, "GPU-a", 0, 1)});
    std::vector<std::string> order;
    for (const auto& gpu : summary.gpus) {
        order.push_back(gpu.gpu);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"2", "10", "GPU-a", "GPU-b"}));
}

TEST(JoblogReport, SvgHasOneBarPerAttemptColouredByOutcome)
{
    const auto svg = render_timeline_svg(k_log);
    EXPECT_EQ(count(svg, "<rect class=\"attempt "), 5u);
    EXPECT_EQ(count(svg, "class=\"attempt ok\""), 2u);
    EXPECT_EQ(count(svg, "class=\"attempt failed\""), 2u);
    EXPECT_EQ(count(svg, "class=\"attempt killed\""), 1u);
    EXPECT_EQ(count(svg, "</title></rect>"), 5u) << "every bar has its tooltip";
    EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(JoblogReport, GpuTimeLostToFailedAttemptsAndToJobsThatNeverSucceeded)
{
    const auto summary = summarize_joblog(k_log);
    EXPECT_DOUBLE_EQ(summary.gpu_seconds, 25);
    EXPECT_EQ(summary.failed_attempts, 3u);
    EXPECT_DOUBLE_EQ(summary.failed_gpu_seconds, 11); // jobs 2 (first), 3 and 4
    EXPECT_EQ(summary.jobs_failed_every_attempt, 2u); // 3 and 4; job 2 succeeded at last
    EXPECT_DOUBLE_EQ(summary.never_succeeded_gpu_seconds, 7);
    EXPECT_DOUBLE_EQ(summary.never_succeeded_retry_gpu_seconds, 0);
    const auto text = format_summary(summary);
    EXPECT_NE(text.find("GPU time  25.000 s, 11.000 s (44.0%) lost to 3 failed attempts\n"
                        "          7.000 s on 2 jobs that failed every attempt\n"),
              std::string::npos)
        << text;
}

TEST(JoblogReport, GpuTimeCountsEveryGpuOfAnAttemptAndTheRetriesOfAHopelessJob)
{
    const std::vector<JoblogRecord> log = {attempt(1, "0,1", 0, 10, 1), attempt(2, "1", 10, 3),
                                           attempt(1, "0", 10, 5, 1),   attempt(3, "0", 15, 1, 1),
                                           attempt(3, "0", 16, 1),      attempt(3, "0", 17, 1, 2)};
    const auto summary = summarize_joblog(log);
    EXPECT_DOUBLE_EQ(summary.gpu_seconds, 31);
    EXPECT_DOUBLE_EQ(summary.failed_gpu_seconds, 27);
    EXPECT_EQ(summary.jobs_failed_every_attempt, 1u);
    EXPECT_DOUBLE_EQ(summary.never_succeeded_gpu_seconds, 25);
    EXPECT_DOUBLE_EQ(summary.never_succeeded_retry_gpu_seconds, 5);
    ASSERT_EQ(summary.failed_jobs.size(), 2u);
    EXPECT_EQ(summary.failed_jobs[0].job, 1u);
    EXPECT_EQ(summary.failed_jobs[0].attempts, 2u);
    EXPECT_TRUE(summary.failed_jobs[0].every_attempt_failed);
    EXPECT_DOUBLE_EQ(summary.failed_jobs[0].gpu_seconds, 25);
    EXPECT_EQ(summary.failed_jobs[0].last.gpu, "0");
    // Job 3 succeeded once (a --resume-failed run later failed it again): it failed, but not
    // every time.
    EXPECT_EQ(summary.failed_jobs[1].job, 3u);
    EXPECT_FALSE(summary.failed_jobs[1].every_attempt_failed);
    EXPECT_EQ(summary.failed_jobs[1].last.exit_code, 2);
    const auto text = format_summary(summary, 1);
    EXPECT_NE(text.find("failed    job 1: exit 1 after 2 attempts on GPU 0: train\n"
                        "          and 1 more failed job (--json lists every one)\n"),
              std::string::npos)
        << text;
}

JoblogRecord interrupted(JoblogRecord record)
{
    record.end = AttemptEnd::interrupted;
    return record;
}

// A run stopped half-way and its --resume 90 s later: the attempts the stop cut short are
// neither failures nor lost time, and the 90 s when nothing ran are no GPU's idle time.
TEST(JoblogReport, AStopsAttemptsAreNotFailuresAndThePauseBeforeAResumeIsNotIdle)
{
    const std::vector<JoblogRecord> log = {
        attempt(1, "0", 0, 10),
        interrupted(attempt(2, "1", 0, 5, 0, 2)),
        attempt(2, "1", 100, 5),
        interrupted(attempt(3, "0", 100, 4)),
    };
    const auto summary = summarize_joblog(log);
    EXPECT_EQ(summary.jobs, 3u);
    EXPECT_EQ(summary.succeeded, 2u);
    EXPECT_EQ(summary.failed, 0u);
    EXPECT_EQ(summary.interrupted, 1u);
    EXPECT_EQ(summary.failed_attempts, 0u);
    EXPECT_EQ(summary.interrupted_attempts, 2u);
    EXPECT_DOUBLE_EQ(summary.failed_gpu_seconds, 0);
    EXPECT_DOUBLE_EQ(summary.interrupted_gpu_seconds, 9);
    EXPECT_TRUE(summary.failed_jobs.empty());
    EXPECT_DOUBLE_EQ(summary.active_seconds, 15);
    ASSERT_EQ(summary.gpus.size(), 2u);
    EXPECT_DOUBLE_EQ(summary.gpus[0].busy, 14);
    EXPECT_DOUBLE_EQ(summary.gpus[0].longest_idle, 1); // 104-105, not the pause
    EXPECT_DOUBLE_EQ(summary.gpus[1].longest_idle, 5); // 5-10, while GPU 0 ran
    EXPECT_DOUBLE_EQ(summary.gpus[1].idle_from, 5);
    EXPECT_DOUBLE_EQ(busy_share(summary.gpus[0], summary), 14.0 / 15.0);
    const auto text = format_summary(summary);
    EXPECT_NE(text.find("jobs      3 (2 succeeded, 0 failed, 1 interrupted), 4 attempts"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" of it with no job running)"), std::string::npos) << text;
    EXPECT_NE(text.find("on 2 attempts interrupted"), std::string::npos) << text;
    EXPECT_EQ(text.find("lost"), std::string::npos) << text;
    const auto svg = render_timeline_svg(log);
    EXPECT_EQ(count(svg, "class=\"attempt interrupted\""), 2u);
    EXPECT_NE(svg.find("3 jobs, 0 failed, 1 interrupted"), std::string::npos);
    const auto json = nlohmann::json::parse(format_summary_json(summary, "jobs.log"));
    EXPECT_EQ(json["jobs"]["interrupted"], 1);
    EXPECT_EQ(json["attempts"]["interrupted"], 2);
    EXPECT_EQ(json["time"]["no_job_running_seconds"], 90.0);
    EXPECT_EQ(json["gpu_time"]["interrupted_attempts_seconds"], 9.0);
}

// A job a stop cut short that then failed on its --resume: the interrupted attempt is not
// part of what failing cost, and the resumed attempt is not a retry (--retries made none).
TEST(JoblogReport, AnInterruptedAttemptIsNoPartOfWhatAFailedJobCost)
{
    const auto summary = summarize_joblog({
        interrupted(attempt(1, "0", 0, 3, -1, 2)),
        attempt(1, "0", 100, 2, 3),
    });
    EXPECT_EQ(summary.failed, 1u);
    EXPECT_EQ(summary.jobs_failed_every_attempt, 1u);
    EXPECT_DOUBLE_EQ(summary.never_succeeded_gpu_seconds, 2);
    EXPECT_DOUBLE_EQ(summary.never_succeeded_retry_gpu_seconds, 0);
    EXPECT_DOUBLE_EQ(summary.interrupted_gpu_seconds, 3);
    ASSERT_EQ(summary.failed_jobs.size(), 1u);
    EXPECT_DOUBLE_EQ(summary.failed_jobs[0].gpu_seconds, 5) << "all its attempts' GPU time";
}

TEST(JoblogReport, JsonHasTheDocumentedFields)
{
    const auto json = nlohmann::json::parse(
        format_summary_json(summarize_joblog(k_log), "runs/jobs.log"), nullptr, false);
    ASSERT_TRUE(json.is_object());
    EXPECT_EQ(json["schema_version"], 3);
    EXPECT_EQ(json["command"], "report");
    EXPECT_EQ(json["joblog"], "runs/jobs.log");
    EXPECT_EQ(json["jobs"], nlohmann::json::parse(R"({"total": 4, "succeeded": 2, "failed": 2,
                                                     "interrupted": 0,
                                                     "failed_every_attempt": 2})"));
    EXPECT_EQ(json["attempts"]["failed_by_outcome"]["killed by SIGTERM"], 1);
    EXPECT_EQ(json["time"]["wall_seconds"], 15.0);
    EXPECT_EQ(json["gpu_time"]["failed_attempts_seconds"], 11.0);
    EXPECT_EQ(json["gpus"][0]["id"], "0");
    EXPECT_EQ(json["gpus"][0]["busy_seconds"], 13.0);
    ASSERT_EQ(json["failed_jobs"].size(), 2u);
    EXPECT_EQ(json["failed_jobs"][0]["id"], 3);
    EXPECT_EQ(json["failed_jobs"][0]["last_attempt"]["signal"], "SIGTERM");
    EXPECT_EQ(json["failed_jobs"][0]["last_attempt"]["exit_code"], nullptr) << "a signal ended it";
    EXPECT_EQ(json["failed_jobs"][0]["last_attempt"]["gpus"], nlohmann::json::array({"0"}));
    EXPECT_EQ(json["failed_jobs"][0]["last_attempt"]["started"], 110.0);
    EXPECT_EQ(json["failed_jobs"][0]["last_attempt"]["stopped"], "no");
    EXPECT_EQ(json["gpus"][0]["longest_idle_from_seconds"], 8.0); // 108-110
    // A GPU busy over the whole span has no idle stretch to place.
    const auto busy = nlohmann::json::parse(
        format_summary_json(summarize_joblog({attempt(1, "0", 1'800'000'000, 5)}), "jobs.log"));
    EXPECT_EQ(busy["gpus"][0]["longest_idle_seconds"], 0.0);
    EXPECT_EQ(busy["gpus"][0]["longest_idle_from_seconds"], nullptr) << busy.dump();
    // A command that is not UTF-8 still makes a document.
    const auto bytes = format_summary_json(
        summarize_joblog({attempt(1, "0", 0, 1, 1, 0, "echo \xff")}), "jobs.log");
    EXPECT_FALSE(nlohmann::json::parse(bytes, nullptr, false).is_discarded()) << bytes;
}

// Seconds are printed to the millisecond: sums of runtimes carry no binary noise.
TEST(JoblogReport, SaysTheHighestGpuMemoryPeakAndTheAttemptsThatRanOutOfIt)
{
    auto log = k_log;
    log[0].peak_memory = std::uint64_t{3} << 30;
    log[1].peak_memory = std::uint64_t{12} << 30; // job 2's first attempt
    log[1].out_of_memory = true;
    log[2].peak_memory = std::uint64_t{5} << 30;
    const auto summary = summarize_joblog(log);
    EXPECT_EQ(summary.memory_peak, std::uint64_t{12} << 30);
    EXPECT_EQ(summary.memory_peak_job, 2u);
    EXPECT_EQ(summary.jobs_with_memory_peak, 2u);
    EXPECT_EQ(summary.out_of_memory_attempts, 1u);
    EXPECT_NE(format_summary(summary).find("GPU memory peak 12 GiB (job 2), recorded for 2 jobs; "
                                           "1 attempt ran out of it\n"),
              std::string::npos)
        << format_summary(summary);
    const auto json = nlohmann::json::parse(format_summary_json(summary, "log"));
    EXPECT_EQ(json["gpu_memory"]["peak_bytes"], std::uint64_t{12} << 30);
    EXPECT_EQ(json["gpu_memory"]["peak_job"], 2);
    EXPECT_EQ(json["gpu_memory"]["out_of_memory_attempts"], 1);
    // Where memory was not watched, the report says nothing of it.
    const auto plain = summarize_joblog(k_log);
    EXPECT_EQ(format_summary(plain).find("GPU memory"), std::string::npos);
    const auto plain_json = nlohmann::json::parse(format_summary_json(plain, "log"));
    EXPECT_TRUE(plain_json["gpu_memory"]["peak_bytes"].is_null());
    EXPECT_EQ(plain_json["gpu_memory"]["jobs_with_peak"], 0);
}

TEST(JoblogReport, JsonSecondsAreRoundedToTheMillisecond)
{
    const auto text = format_summary_json(
        summarize_joblog({attempt(1, "0", 1'800'000'000.1234, 0.1),
                          attempt(2, "1", 1'800'000'000.2, 0.2),
                          attempt(3, "0,1", 1'800'000'000.3, 2.2169999999999996)}),
        "jobs.log");
    EXPECT_NE(text.find("\"runtime_seconds\": 2.517,"), std::string::npos) << text;
    EXPECT_NE(text.find("\"first_started\": 1800000000.123,"), std::string::npos) << text;
    // No number with binary noise (the shares have four places, the seconds three).
    EXPECT_FALSE(std::regex_search(text, std::regex(R"(\.[0-9]{5})"))) << text;
}

TEST(JoblogReport, SvgGroupsEachJobsAttemptsAndJoinsEachRetry)
{
    const auto svg = render_timeline_svg(k_log);
    EXPECT_EQ(count(svg, "<g class=\"job\""), 4u);
    EXPECT_NE(svg.find("<g class=\"job\" id=\"job-2\">"), std::string::npos);
    EXPECT_EQ(count(svg, "</path>"), 1u) << "job 2's one retry";
    EXPECT_NE(svg.find("<title>job 2, attempt 2 of 2: exit 0 after 4.000 s on GPU 0"),
              std::string::npos)
        << svg;
    EXPECT_NE(svg.find("width=\"100%\" viewBox=\"0 0 "), std::string::npos);
    EXPECT_NE(svg.find("11.000 s (44.0%) lost to 3 failed attempts"), std::string::npos);
}

TEST(JoblogReport, CommandsAreEscapedIntoWellFormedText)
{
    const auto svg = render_timeline_svg({attempt(
        1, "0", 0, 1, 0, 0, "awk '{print $1}' < in > \"out\" && echo \xff\x01 caf\xc3\xa9")});
    EXPECT_NE(svg.find("awk '{print $1}' &lt; in &gt; &quot;out&quot; &amp;&amp; echo "
                       "\xEF\xBF\xBD\xEF\xBF\xBD caf\xc3\xa9"),
              std::string::npos)
        << svg;
}

TEST(JoblogReport, HugeAndInfiniteTimesStillEnd)
{
    // Records are checked when read; the report itself must end on whatever it is given.
    for (const double huge : {1e300, 1.7e308, std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()}) {
        const std::vector<JoblogRecord> log = {attempt(1, "0", 0, 1), attempt(2, "1", huge, huge)};
        const auto svg = render_timeline_svg(log);
        EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7) << huge;
        EXPECT_LE(count(svg, "class=\"grid\""), 21u) << huge;
        EXPECT_FALSE(format_summary(summarize_joblog(log)).empty());
    }
}

} // namespace
} // namespace gpusched
