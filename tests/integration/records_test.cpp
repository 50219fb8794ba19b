// Job records and control: joblog, resume, retries, halt, timeout, output files, tags, dry run.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <sstream>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// A command that appends its job id to DIR/ran-ID and then fails until it has run `failures`
// times (counted in that file).
std::string flaky(const TempDir& dir, int failures)
{
    return fmt::format("f={}/ran-$GPUSCHED_JOB_ID; echo \"$GPUSCHED_GPU\" >> $f; "
                       "test $(wc -l < $f) -gt {}",
                       dir.path().string(), failures);
}

TEST(Joblog, OneLinePerAttemptInGnuParallelsColumnsWithTheGpuInHost)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto result =
        run(dir, {{"--gpus", "7", "--joblog", joblog.string()}, "true\nexit 3\nkill -TERM $$\n"});
    EXPECT_EQ(result.exit_status, 2) << result.err;
    const auto lines = split_lines(read_file(joblog));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0],
              "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand");
    const auto records = joblog_records(joblog);
    for (const auto& record : records) {
        EXPECT_EQ(record.size(), 9u);
    }
    EXPECT_EQ(records[0][0], "1");
    EXPECT_EQ(records[0][1], "gpu=7");
    EXPECT_EQ(records[0][6], "0");
    EXPECT_EQ(records[0][8], "true");
    EXPECT_EQ(records[1][6], "3");
    EXPECT_EQ(records[2][7], std::to_string(SIGTERM));
    EXPECT_GT(std::stod(records[0][2]), 1.7e9) << "start time in seconds since the epoch";
}

TEST(Joblog, EachRecordIsWrittenAsTheJobEnds)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    Process gpusched(dir, {{"--gpus", "0,1", "--joblog", joblog.string()}, "true\nsleep 30\n"});
    EXPECT_TRUE(eventually([&] { return joblog_records(joblog).size() == 1; }))
        << "job 1's record must not wait for job 2";
    gpusched.signal(SIGTERM);
    gpusched.wait();
}

TEST(Joblog, AppendsToAnExistingLogWithoutASecondHeader)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    run(dir, {{"--gpus", "0", "--joblog", joblog.string()}, "true\n"});
    run(dir, {{"--gpus", "0", "--joblog", joblog.string()}, "true\n"});
    const auto lines = split_lines(read_file(joblog));
    EXPECT_EQ(lines.size(), 3u);
}

TEST(Resume, AfterSigkillEveryJobRunsAndNoFinishedJobRunsAgain)
{
    adopt_orphans();
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    std::vector<std::string> commands;
    for (int i = 1; i <= 12; ++i) {
        commands.push_back(record_command(dir, 0.2, fmt::format("t{}", i)));
    }
    const auto input = dir / "commands.txt";
    write_file(input, join_lines(commands));
    {
        Process crashed(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), input.string()}});
        ASSERT_TRUE(eventually([&] { return joblog_records(joblog).size() >= 4; }));
        crashed.signal(SIGKILL);
        crashed.wait();
    }
    // The machine "crashed": the jobs that were running die with it, before they record.
    for (const pid_t orphan : leftover_processes()) {
        kill(-orphan, SIGKILL);
        kill(orphan, SIGKILL);
    }
    leftover_processes();
    std::set<std::string> finished_before;
    for (const auto& record : joblog_records(joblog)) {
        finished_before.insert(record[8]);
    }
    const auto ran_before = read_records(dir / "runs.log").size();
    EXPECT_EQ(ran_before, finished_before.size());

    const auto resumed =
        run(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), "--resume", input.string()}});
    ASSERT_EQ(resumed.exit_status, 0) << resumed.err;
    std::map<std::string, int> runs;
    for (const auto& record : read_records(dir / "runs.log")) {
        ++runs[record.tag];
    }
    ASSERT_EQ(runs.size(), 12u) << "every job has run";
    for (const auto& [tag, count] : runs) {
        EXPECT_EQ(count, 1) << tag << " ran " << count << " times";
    }
    EXPECT_NE(
        resumed.err.find(fmt::format("{} skipped as done in the job log", finished_before.size())),
        std::string::npos)
        << resumed.err;
}

TEST(Resume, ResumeFailedRunsOnlyTheFailedJobsAgain)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = join_lines(
        {"echo >> " + (dir / "a").string(), flaky(dir, 1), "echo >> " + (dir / "c").string()});
    const auto first = run(dir, {{"--gpus", "0", "--joblog", joblog.string()}, input});
    EXPECT_EQ(first.exit_status, 1) << first.err;
    const auto second =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume-failed"}, input});
    EXPECT_EQ(second.exit_status, 0) << second.err;
    EXPECT_EQ(split_lines(read_file(dir / "a")).size(), 1u);
    EXPECT_EQ(split_lines(read_file(dir / "ran-2")).size(), 2u);
    EXPECT_EQ(split_lines(read_file(dir / "c")).size(), 1u);
    const auto third = run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume"}, input});
    EXPECT_EQ(split_lines(read_file(dir / "ran-2")).size(), 2u) << "done jobs are not run again";
}

TEST(Resume, AChangedCommandIsNotSkipped)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    run(dir, {{"--gpus", "0", "--joblog", joblog.string()},
              "echo old >> " + (dir / "out").string() + "\n"});
    run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume"},
              "echo new >> " + (dir / "out").string() + "\n"});
    EXPECT_EQ(read_file(dir / "out"), "old\nnew\n");
}

TEST(Resume, NeedsAJoblog)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0", "--resume"}, "true\n"});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("--joblog"), std::string::npos) << result.err;
}

TEST(Retries, AFlakyJobSucceedsOnALaterAttemptOnAnotherGpu)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto result = run(dir, {{"--gpus", "0,1", "--retries", "2", "--joblog", joblog.string()},
                                  flaky(dir, 2) + "\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    const auto records = joblog_records(joblog);
    ASSERT_EQ(records.size(), 3u) << "one record per attempt";
    EXPECT_EQ(records[0][6], "1");
    EXPECT_EQ(records[2][6], "0");
    const auto gpus = split_lines(read_file(dir / "ran-1"));
    ASSERT_EQ(gpus.size(), 3u);
    EXPECT_NE(gpus[0], gpus[1]) << "a retry goes to another GPU when one is free";
    EXPECT_NE(gpus[1], gpus[2]);
}

TEST(Retries, AJobThatKeepsFailingCountsOnce)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto result =
        run(dir, {{"--gpus", "0", "--retries", "1", "--joblog", joblog.string()}, "false\ntrue\n"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_EQ(joblog_records(joblog).size(), 3u);
    EXPECT_NE(result.err.find("1 retry"), std::string::npos) << result.err;
}

TEST(Halt, NowFailStopsEverythingAtTheFirstFailure)
{
    TempDir dir;
    const auto result =
        run(dir,
            {{"--gpus", "0,1", "--halt", "now,fail=1", "--kill-after", "1"},
             "sleep 30\nsleep 0.2; false\ntouch " + (dir / "never").string() + "\n"},
            20s);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_FALSE(fs::exists(dir / "never"));
    EXPECT_NE(result.err.find("1 interrupted"), std::string::npos) << result.err;
}

TEST(Halt, SoonFailLetsRunningJobsFinish)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0,1", "--halt", "soon,fail=1"},
                                  "sleep 0.5; touch " + (dir / "finished").string() +
                                      "\nfalse\ntouch " + (dir / "never").string() + "\n"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_TRUE(fs::exists(dir / "finished"));
    EXPECT_FALSE(fs::exists(dir / "never"));
}

TEST(Halt, SuccessHaltExitsZero)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "0,1", "--halt", "now,success=1"}, "sleep 30\ntrue\n"}, 20s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

TEST(Halt, BadSpecIsAUsageError)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0", "--halt", "sometimes"}, "true\n"});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("bad --halt 'sometimes'"), std::string::npos) << result.err;
}

TEST(Timeout, AJobPastItsTimeIsStoppedAndFails)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto result = run(
        dir,
        {{"--gpus", "0", "--timeout", "0.3", "--kill-after", "0.3", "--joblog", joblog.string()},
         "sleep 30\ntrap '' TERM; sleep 30\ntrue\n"},
        20s);
    EXPECT_EQ(result.exit_status, 2) << result.err;
    const auto records = joblog_records(joblog);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0][7], std::to_string(SIGTERM));
    EXPECT_EQ(records[1][7], std::to_string(SIGKILL)) << "a job that ignores SIGTERM is killed";
    EXPECT_EQ(records[2][6], "0");
    EXPECT_NE(result.err.find("(timed out)"), std::string::npos) << result.err;
}

TEST(OutputDir, EachJobsOutputGoesToItsOwnFiles)
{
    TempDir dir;
    const auto out = dir / "out";
    const auto result =
        run(dir, {{"--gpus", "GPU-8e6b", "--output-dir", out.string(), "--retries", "1"},
                  "echo hello; echo oops >&2\n" + flaky(dir, 1) + "\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(out / "1.out"), "hello\n");
    EXPECT_EQ(read_file(out / "1.err"), "oops\n");
    const auto info = read_file(out / "1.info");
    EXPECT_NE(info.find("command: echo hello; echo oops >&2\n"), std::string::npos) << info;
    EXPECT_NE(info.find("gpu: GPU-8e6b\n"), std::string::npos) << info;
    EXPECT_NE(info.find("exit: 0\n"), std::string::npos) << info;
    EXPECT_NE(read_file(out / "2.info").find("exit: 1\n"), std::string::npos);
    EXPECT_NE(read_file(out / "2.2.info").find("attempt: 2\n"), std::string::npos);
    EXPECT_EQ(result.out, "") << "nothing reaches the terminal";
}

TEST(Tag, EveryLineNamesItsJobAndGpuAndLinesNeverMix)
{
    TempDir dir;
    const std::string chatty =
        "for i in 1 2 3 4 5; do printf 'part-'; sleep 0.01; echo \"$GPUSCHED_JOB_ID\"; done; "
        "echo err-$GPUSCHED_JOB_ID >&2; printf no-newline";
    const auto result = run(dir, {{"--gpus", "0,1", "--tag"}, chatty + "\n" + chatty + "\n"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto lines = split_lines(result.out);
    ASSERT_EQ(lines.size(), 12u) << result.out;
    for (const auto& line : lines) {
        const bool job1 = line == "[job 1, GPU 0] part-1" || line == "[job 1, GPU 0] no-newline";
        const bool job2 = line == "[job 2, GPU 1] part-2" || line == "[job 2, GPU 1] no-newline";
        EXPECT_TRUE(job1 || job2) << "mixed or untagged line: " << line;
    }
    EXPECT_NE(result.err.find("[job 2, GPU 1] err-2\n"), std::string::npos) << result.err;
}

TEST(Tag, CannotBeCombinedWithOutputDir)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "0", "--tag", "--output-dir", (dir / "o").string()}, "true\n"});
    EXPECT_EQ(result.exit_status, 255);
}

TEST(DryRun, PrintsThePlanAndRunsNothing)
{
    TempDir dir;
    std::string input;
    for (int i = 1; i <= 5; ++i) {
        input += fmt::format("touch {}\n", (dir / fmt::format("f{}", i)).string());
    }
    const auto result = run(dir, {{"--gpus", "0,1", "--dry-run"}, input});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto lines = split_lines(result.out);
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[0], "job 1 on GPU 0: touch " + (dir / "f1").string());
    EXPECT_EQ(lines[1].substr(0, 15), "job 2 on GPU 1:");
    EXPECT_EQ(lines[2].substr(0, 15), "job 3 on GPU 0:");
    for (int i = 1; i <= 5; ++i) {
        EXPECT_FALSE(fs::exists(dir / fmt::format("f{}", i)));
    }
}

TEST(Progress, DrawnWhenForcedAndNeverOtherwiseOffATerminal)
{
    TempDir dir;
    const auto forced = run(dir, {{"--gpus", "0", "--progress"}, "sleep 0.3\ntrue\n"});
    EXPECT_EQ(forced.exit_status, 0);
    EXPECT_NE(forced.err.find("\r\033[K"), std::string::npos);
    EXPECT_NE(forced.err.find("running"), std::string::npos) << forced.err;
    const auto plain = run(dir, {{"--gpus", "0"}, "sleep 0.3\ntrue\n"});
    EXPECT_EQ(plain.err.find('\033'), std::string::npos) << "stderr is no terminal here";
    EXPECT_NE(plain.err.find("GPU busy time"), std::string::npos) << plain.err;
}

TEST(Progress, DrawnOnATerminalUnlessTurnedOff)
{
    if (!fs::exists("/usr/bin/script")) {
        GTEST_SKIP() << "script(1) from util-linux is needed to give gpusched a terminal";
    }
    TempDir dir;
    const auto on_a_terminal = [&](const std::string& options) {
        const auto command = fmt::format("{} --gpus 0 {} < /dev/null", binary().string(), options);
        return run(dir, {{"-qec", command, "/dev/null"},
                         std::nullopt,
                         std::nullopt,
                         {},
                         fs::path("/usr/bin/script")});
    };
    const auto on_terminal = on_a_terminal("");
    EXPECT_NE(on_terminal.out.find("\033[K"), std::string::npos) << on_terminal.out;
    const auto turned_off = on_a_terminal("--no-progress");
    EXPECT_EQ(turned_off.out.find("\033[K"), std::string::npos) << turned_off.out;
}

} // namespace
} // namespace gpusched::testing
