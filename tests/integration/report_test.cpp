// What to look at after a run: the failed jobs named at its end, and gpusched report (text,
// JSON and the SVG timeline) on a job log written by a real run.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <nlohmann/json.hpp>

namespace gpusched::testing {
namespace {

// xmllint's answer to an XPath expression on `file`, or nothing when xmllint is missing.
std::optional<std::string> xpath(const TempDir& dir, const fs::path& file,
                                 const std::string& expression)
{
    if (!fs::exists("/usr/bin/xmllint")) {
        return std::nullopt;
    }
    const auto result = run(dir, {{"--xpath", expression, file.string()},
                                  std::nullopt,
                                  std::nullopt,
                                  {},
                                  fs::path("/usr/bin/xmllint")});
    EXPECT_EQ(result.exit_status, 0) << "not well-formed: " << result.err;
    auto answer = result.out;
    while (!answer.empty() && answer.back() == '\n') {
        answer.pop_back();
    }
    return answer;
}

// One of a thing is singular wherever the report counts: attempts, jobs, failed attempts.
TEST(Report, OneIsSingular)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto ran = run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "-q"}, "exit 3\n"});
    ASSERT_EQ(ran.exit_status, 1) << ran.err;
    const auto svg = dir / "timeline.svg";
    const auto report = run(dir, {{"report", joblog.string(), "--svg", svg.string()}});
    ASSERT_EQ(report.exit_status, 0) << report.err;
    for (const auto* said :
         {"jobs      1 (0 succeeded, 1 failed), 1 attempt\n", " lost to 1 failed attempt\n",
          " on 1 job that failed every attempt", "busy 100.0% (1 attempt)"}) {
        EXPECT_NE(report.out.find(said), std::string::npos) << said << " in\n" << report.out;
    }
    EXPECT_EQ(report.out.find("1 attempts"), std::string::npos) << report.out;
    const auto drawn = read_file(svg);
    EXPECT_NE(drawn.find(">1 job, 1 failed, 1 attempt over "), std::string::npos) << drawn;
    EXPECT_EQ(drawn.find("1 attempts"), std::string::npos) << drawn;
}

TEST(Report, SummarisesAJoblogAndDrawsOneBarPerAttempt)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto ran =
        run(dir, {{"--gpus", "0,1", "--retries", "1", "--joblog", joblog.string(), "-q"},
                  "sleep 0.2\nexit 3\nsleep 0.1 && echo '<&>' \xff\n"});
    ASSERT_EQ(ran.exit_status, 1) << ran.err;

    const auto svg = dir / "timeline.svg";
    const auto report = run(dir, {{"report", joblog.string(), "--svg", svg.string()}});
    ASSERT_EQ(report.exit_status, 0) << report.err;
    EXPECT_NE(report.out.find("jobs      3 (2 succeeded, 1 failed), 4 attempts"), std::string::npos)
        << report.out;
    EXPECT_NE(report.out.find("exit 3: 2"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("GPU 0"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("longest idle gap"), std::string::npos) << report.out;

    const auto bars =
        xpath(dir, svg, "count(//*[local-name()='rect'][starts-with(@class,'attempt')])");
    if (!bars) {
        GTEST_SKIP() << "xmllint (Debian's libxml2-utils) is needed to check the SVG";
    }
    EXPECT_EQ(*bars, "4");
    const auto failed = xpath(dir, svg, "count(//*[local-name()='rect'][@class='attempt failed'])");
    EXPECT_EQ(failed.value_or(""), "2");
    // Each job's attempts in a group of its own, the retry joined to the attempt before it.
    EXPECT_EQ(xpath(dir, svg, "count(//*[local-name()='g'][@class='job'])").value_or(""), "3");
    EXPECT_EQ(xpath(dir, svg, "count(//*[local-name()='g'][@id='job-2']/*[local-name()='rect'])")
                  .value_or(""),
              "2");
    EXPECT_EQ(xpath(dir, svg,
                    "count(//*[local-name()='g'][@id='job-2']/*[local-name()='path']"
                    "[@class='retry'])")
                  .value_or(""),
              "1");
    // Every bar, however narrow, names its job and command when pointed at.
    EXPECT_EQ(xpath(dir, svg,
                    "count(//*[local-name()='rect'][starts-with(@class,'attempt')]"
                    "[starts-with(*[local-name()='title'],'job ')])")
                  .value_or(""),
              "4");
    EXPECT_NE(xpath(dir, svg,
                    "string(//*[local-name()='g'][@id='job-3']/*[local-name()='rect']/"
                    "*[local-name()='title'])")
                  .value_or("")
                  .find("sleep 0.1 && echo '<&>'"),
              std::string::npos);
    // It takes its container's width, keeping its proportions.
    EXPECT_EQ(xpath(dir, svg, "string(/*/@width)").value_or(""), "100%");
    EXPECT_EQ(xpath(dir, svg, "count(/*/@height)").value_or(""), "0");
    EXPECT_EQ(xpath(dir, svg, "string(/*/@viewBox)").value_or("").rfind("0 0 ", 0), 0u);
    const auto lost = xpath(dir, svg, "string(//*[@id='gpu-time'])").value_or("");
    EXPECT_NE(lost.find("lost to 2 failed attempts"), std::string::npos) << lost;
    EXPECT_NE(lost.find("on 1 job that failed every attempt"), std::string::npos) << lost;
}

// A job that fails, then succeeds when retried: the file `flag` tells its second attempt.
std::string fails_once(const TempDir& dir)
{
    return fmt::format("test -e {0} || {{ touch {0}; exit 4; }}", (dir / "flag").string());
}

TEST(Report, JsonCountsTheGpuTimeLostToFailedAttemptsAndNamesTheFailedJobs)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto ran =
        run(dir, {{"--gpus", "0,1", "--retries", "1", "--joblog", joblog.string(), "-q"},
                  "sleep 0.3\nsleep 0.2; exit 3\n" + fails_once(dir) + "\n"});
    ASSERT_EQ(ran.exit_status, 1) << ran.err;

    const auto report = run(dir, {{"report", joblog.string(), "--json"}});
    ASSERT_EQ(report.exit_status, 0) << report.err;
    const auto json = nlohmann::json::parse(report.out, nullptr, false);
    ASSERT_TRUE(json.is_object()) << report.out;
    EXPECT_EQ(json["schema_version"], 3);
    EXPECT_EQ(json["joblog"], joblog.string());
    EXPECT_EQ(json["jobs"]["total"], 3);
    EXPECT_EQ(json["jobs"]["succeeded"], 2);
    EXPECT_EQ(json["jobs"]["failed"], 1);
    EXPECT_EQ(json["jobs"]["failed_every_attempt"], 1);
    EXPECT_EQ(json["attempts"]["total"], 5);
    EXPECT_EQ(json["attempts"]["failed"], 3);
    EXPECT_EQ(json["attempts"]["failed_by_outcome"]["exit 3"], 2);
    EXPECT_EQ(json["attempts"]["failed_by_outcome"]["exit 4"], 1);

    // Job 2 failed twice, each time after at least 0.2 s of one GPU: that time is lost, the
    // second half of it to the retry; job 3's failed first attempt adds to the failed time.
    const auto& time = json["gpu_time"];
    const double total = time["total_seconds"];
    const double failed = time["failed_attempts_seconds"];
    const double every = time["jobs_failed_every_attempt_seconds"];
    const double retries = time["retries_of_jobs_failed_every_attempt_seconds"];
    EXPECT_GE(every, 0.4);
    EXPECT_GE(retries, 0.2);
    EXPECT_LT(retries, every);
    EXPECT_GT(failed, every) << "job 3's failed attempt counts too";
    EXPECT_GE(total, failed + 0.3) << "job 1's success is not lost";

    ASSERT_EQ(json["failed_jobs"].size(), 1u) << json.dump(2);
    const auto& job = json["failed_jobs"][0];
    EXPECT_EQ(job["id"], 2);
    EXPECT_EQ(job["attempts"], 2);
    EXPECT_EQ(job["every_attempt_failed"], true);
    EXPECT_EQ(job["command"], "sleep 0.2; exit 3");
    EXPECT_EQ(job["last_attempt"]["exit_code"], 3);
    EXPECT_EQ(job["last_attempt"]["signal"], nullptr);
    EXPECT_EQ(job["last_attempt"]["outcome"], "exit 3");
    EXPECT_DOUBLE_EQ(job["gpu_seconds"].get<double>(), every);

    const auto text = run(dir, {{"report", joblog.string()}});
    ASSERT_EQ(text.exit_status, 0) << text.err;
    EXPECT_NE(text.out.find("lost to 3 failed attempts"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("on 1 job that failed every attempt"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("failed    job 2: exit 3 after 2 attempts on GPU "), std::string::npos)
        << text.out;
}

// The end of a run names its failed jobs: outcome, attempts, command, and where the output is.
TEST(RunEnd, NamesTheFailedJobsAndWhereTheirOutputIs)
{
    TempDir dir;
    const auto out = dir / "out";
    const auto ran = run(dir, {{"--gpus", "0", "--retries", "1", "--output-dir", out.string()},
                               "echo fine\necho oops; exit 3\nkill -TERM $$\n"});
    ASSERT_EQ(ran.exit_status, 2) << ran.err;
    const auto summary = ran.err.find("3 jobs: 1 succeeded, 2 failed");
    ASSERT_NE(summary, std::string::npos) << ran.err;
    const auto after = ran.err.substr(summary);
    const auto first = fmt::format(
        "failed job 2: exit 3 after 2 attempts: echo oops; exit 3; output in {0}/2.2.out, "
        "{0}/2.2.err",
        out.string());
    const auto second = fmt::format(
        "failed job 3: killed by SIGTERM after 2 attempts: kill -TERM $$; output in {0}/3.2.out, "
        "{0}/3.2.err",
        out.string());
    EXPECT_NE(after.find(first), std::string::npos) << ran.err;
    EXPECT_NE(after.find(second), std::string::npos) << ran.err;
    EXPECT_LT(after.find(first), after.find(second)) << "in the order they ended";
    EXPECT_EQ(read_file(out / "2.2.out"), "oops\n") << "the files named hold the output";
    EXPECT_EQ(after.find("failed job 1"), std::string::npos);
}

TEST(RunEnd, NamesTenFailedJobsAndSaysWhereTheRestAre)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    std::string commands = "true\n";
    for (int i = 0; i < 13; ++i) {
        commands += fmt::format("exit {}\n", 10 + i);
    }
    const auto ran = run(dir, {{"--gpus", "0", "--joblog", joblog.string()}, commands});
    ASSERT_EQ(ran.exit_status, 13) << ran.err;
    const auto after = ran.err.substr(ran.err.find("14 jobs: 1 succeeded, 13 failed"));
    EXPECT_EQ(count_lines_with(after, "] failed job "), 10u) << after;
    EXPECT_NE(after.find("failed job 2: exit 10: exit 10\n"), std::string::npos) << after;
    EXPECT_NE(after.find("and 3 more failed jobs: see " + joblog.string() + "\n"),
              std::string::npos)
        << after;
}

TEST(Report, BadJoblogIsAUsageErrorNamingTheLine)
{
    TempDir dir;
    write_file(dir / "bad.log", "Seq\tHost\nnot a record\n");
    const auto result = run(dir, {{"report", (dir / "bad.log").string()}});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("bad.log:2: not a job log record"), std::string::npos) << result.err;
    const auto missing = run(dir, {{"report", (dir / "missing.log").string()}});
    EXPECT_EQ(missing.exit_status, 255);
    // A directory, a device that never ends and a FIFO nobody writes are refused at once.
    fs::create_directory(dir / "a-directory");
    ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
    for (const auto& path :
         {(dir / "a-directory").string(), std::string("/dev/zero"), (dir / "fifo").string()}) {
        const auto refused = run(dir, {{"report", path}}, std::chrono::seconds(20));
        EXPECT_FALSE(refused.timed_out) << path;
        EXPECT_EQ(refused.exit_status, 255) << path;
        EXPECT_NE(refused.err.find("not a regular file"), std::string::npos) << refused.err;
    }
}

} // namespace
} // namespace gpusched::testing
