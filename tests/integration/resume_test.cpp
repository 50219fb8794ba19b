// What resume, a stop and a crash of gpusched do to jobs and their records: interrupted jobs
// run again, finished ones are found wherever they stand in the input, a killed scheduler's
// jobs stop with it, and a torn record costs only its own job.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <optional>
#include <sstream>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// A job named `name` that says it started in DIR/ran, then runs until DIR/fast exists.
std::string slow_job(const TempDir& dir, const std::string& name)
{
    return fmt::format("echo {1} >> {0}/ran; until test -e {0}/fast; do sleep 0.05; done",
                       dir.path().string(), name);
}

std::string quick_job(const TempDir& dir, const std::string& name)
{
    return fmt::format("echo {1} >> {0}/ran", dir.path().string(), name);
}

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

TEST(Resume, JobsASignalInterruptedRunAgain)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = dir / "commands.txt";
    write_file(input,
               join_lines({quick_job(dir, "one"), slow_job(dir, "two"), slow_job(dir, "three")}));
    Process first(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), input.string()}});
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 3; }));
    first.signal(SIGINT);
    const auto stopped = first.wait();
    EXPECT_EQ(stopped.exit_status, 128 + SIGINT) << stopped.err;
    EXPECT_TRUE(has(stopped.err, "interrupted: job 2 on GPU")) << stopped.err;
    EXPECT_TRUE(has(stopped.err, "interrupted: job 3 on GPU")) << stopped.err;
    EXPECT_TRUE(has(stopped.err, "2 interrupted")) << stopped.err;
    const auto records = joblog_records(joblog);
    ASSERT_EQ(records.size(), 3u);
    std::map<std::string, std::string> host_column;
    for (const auto& record : records) {
        ASSERT_EQ(record.size(), 9u);
        host_column[record[0]] = record[1];
    }
    EXPECT_FALSE(host_column["1"].ends_with(";interrupted")) << host_column["1"];
    EXPECT_TRUE(host_column["2"].ends_with(";interrupted")) << host_column["2"];
    EXPECT_TRUE(host_column["3"].ends_with(";interrupted")) << host_column["3"];

    write_file(dir / "fast", "");
    const auto resumed =
        run(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), "--resume", input.string()}});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran.at("one"), 1);
    EXPECT_EQ(ran.at("two"), 2);
    EXPECT_EQ(ran.at("three"), 2);
    EXPECT_TRUE(has(resumed.err, "1 skipped as done in the job log")) << resumed.err;
}

TEST(Resume, AJobThatCatchesTheStopAndExitsZeroStillRunsAgain)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto command = fmt::format("echo caught >> {0}/ran; trap 'exit 0' TERM; "
                                     "test -e {0}/fast || {{ sleep 30 & wait; }}",
                                     dir.path().string());
    Process first(dir, {{"--gpus", "0", "--joblog", joblog.string()}, command + "\n"});
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 1; }));
    first.signal(SIGTERM);
    const auto stopped = first.wait();
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    const auto records = joblog_records(joblog);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0][1], "gpu=0;interrupted");
    EXPECT_EQ(records[0][6], "-1") << "the job exited 0, and GNU parallel logs a job it stopped so";
    EXPECT_EQ(records[0][7], "0");

    write_file(dir / "fast", "");
    const auto resumed =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume"}, command + "\n"});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran").at("caught"), 2);
}

TEST(Resume, JobsThatHaltNowStoppedRunAgain)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = dir / "commands.txt";
    write_file(input, join_lines({slow_job(dir, "long"),
                                  fmt::format("until test -s {}/ran; do sleep 0.01; done; exit 3",
                                              dir.path().string())}));
    const auto halted = run(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), "--halt",
                                   "now,fail=1", input.string()}});
    EXPECT_EQ(halted.exit_status, 1) << halted.err;
    EXPECT_TRUE(has(halted.err, "interrupted: job 1")) << halted.err;

    write_file(dir / "fast", "");
    const auto resumed =
        run(dir, {{"--gpus", "0,1", "--joblog", joblog.string(), "--resume", input.string()}});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran").at("long"), 2) << "the interrupted job ran again";
    EXPECT_TRUE(has(resumed.err, "1 skipped")) << "the failed job ended by itself: " << resumed.err;
}

TEST(Resume, FindsFinishedJobsWhereverTheyStandInTheInput)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    std::vector<std::string> first;
    for (const auto* name : {"a", "b", "c", "d"}) {
        first.push_back(quick_job(dir, name));
    }
    ASSERT_EQ(
        run(dir, {{"--gpus", "0,1", "--joblog", joblog.string()}, join_lines(first)}).exit_status,
        0);
    const std::vector<std::string> reordered = {first[3], first[2], quick_job(dir, "e"),
                                                first[1], first[0], first[0]};
    const auto resumed = run(
        dir, {{"--gpus", "0,1", "--joblog", joblog.string(), "--resume"}, join_lines(reordered)});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran, (std::map<std::string, int>{{"a", 2}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}}))
        << "only e, and the second copy of a, had not run";
}

TEST(Resume, AShuffledHypersearchRunsOnlyWhatDidNotRun)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto grid = [&] {
        const auto generated = run(
            dir, {{"hypersearch", fmt::format("echo {{a}}-{{b}} >> {}/ran", dir.path().string()),
                   "-p", "a", "1", "2", "3", "4", "-p", "b", "x", "y", "z"}});
        EXPECT_EQ(generated.exit_status, 0) << generated.err;
        return split_lines(generated.out);
    };
    auto first = grid();
    ASSERT_EQ(first.size(), 12u);
    first.resize(5); // the first run got through five configurations
    ASSERT_EQ(
        run(dir, {{"--gpus", "0", "--joblog", joblog.string()}, join_lines(first)}).exit_status, 0);
    auto second = grid();
    const auto resumed =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume"}, join_lines(second)});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran.size(), 12u);
    for (const auto& [configuration, count] : ran) {
        EXPECT_EQ(count, 1) << configuration << " ran " << count << " times";
    }
}

TEST(Resume, NamesOnceTheRecordsNoInputLineMatches)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    run(dir, {{"--gpus", "0", "--joblog", joblog.string()},
              join_lines({quick_job(dir, "kept"), quick_job(dir, "gone")})});
    const auto resumed = run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume"},
                                   join_lines({quick_job(dir, "kept"), quick_job(dir, "new")})});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    std::size_t warnings = 0;
    for (const auto& line : split_lines(resumed.err)) {
        if (has(line, "in no input line")) {
            ++warnings;
            EXPECT_TRUE(has(line, "1 job")) << line;
            EXPECT_TRUE(has(line, "job 2: echo gone")) << line;
        }
    }
    EXPECT_EQ(warnings, 1u) << resumed.err;
}

TEST(Resume, ATornLastRecordIsSkippedAndItsJobRunsAgain)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = dir / "commands.txt";
    write_file(input, join_lines({quick_job(dir, "a"), quick_job(dir, "b")}));
    ASSERT_EQ(run(dir, {{"--gpus", "0", "--joblog", joblog.string(), input.string()}}).exit_status,
              0);
    // The disk filled up, or the power went, while job 2's record was written.
    auto text = read_file(joblog);
    const auto cut = text.rfind('\t', text.size() - 2);
    ASSERT_NE(cut, std::string::npos);
    text.resize(cut - 3);
    write_file(joblog, text);

    const auto resumed =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume", input.string()}});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_TRUE(has(resumed.err, fmt::format("{}:3: skipping a torn record", joblog.string())))
        << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran"), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
    // The new record starts on a line of its own, so the log reads whole again.
    const auto again =
        run(dir, {{"--gpus", "0", "--joblog", joblog.string(), "--resume", input.string()}});
    EXPECT_EQ(again.exit_status, 0) << again.err;
    EXPECT_TRUE(has(again.err, "2 skipped")) << again.err;
    EXPECT_EQ(line_counts(dir / "ran"), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));
}

// A job that notes its pid in DIR/pids and ignores SIGTERM, after saying whether any process
// an earlier run noted in DIR/old-pids is still alive (a zombie is not: it runs nothing).
// Unless DIR/fast exists, it then notes its name in DIR/sleeping, past that check, and sleeps.
std::string stubborn_job(const TempDir& dir, const std::string& name)
{
    return fmt::format("trap '' TERM; echo $$ >> {0}/pids; echo {1} >> {0}/ran; "
                       "for p in $(cat {0}/old-pids 2>/dev/null); do "
                       "s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); "
                       "if [ -n \"$s\" ] && [ \"$s\" != Z ]; then "
                       "echo \"$p, seen by $$\" >> {0}/alive; fi; done; "
                       "test -e {0}/fast || {{ echo {1} >> {0}/sleeping; exec sleep 30; }}",
                       dir.path().string(), name);
}

// The pids the jobs noted in DIR/pids.
std::vector<pid_t> noted_pids(const TempDir& dir)
{
    std::vector<pid_t> pids;
    for (const auto& [pid, count] : line_counts(dir / "pids")) {
        pids.push_back(std::stoi(pid));
    }
    return pids;
}

TEST(Crash, JobsOfAKilledSchedulerStopWithIt)
{
    TempDir dir;
    Process killed(dir, {{"--gpus", "0,1", "--kill-after", "1"},
                         join_lines({stubborn_job(dir, "a"), stubborn_job(dir, "b")})});
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 2; }));
    killed.signal(SIGKILL);
    killed.wait();
    const auto pids = noted_pids(dir);
    ASSERT_EQ(pids.size(), 2u);
    EXPECT_TRUE(process_alive(pids[0]) || process_alive(pids[1]))
        << "they ignore SIGTERM for a second";
    EXPECT_TRUE(eventually([&] { return std::none_of(pids.begin(), pids.end(), process_alive); }))
        << "the jobs of a SIGKILLed gpusched must not run on unrecorded";
}

TEST(Crash, ResumeAfterASigkillWaitsForTheKilledRunsJobsAndRunsThemOnce)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = dir / "commands.txt";
    write_file(input, join_lines({quick_job(dir, "done"), stubborn_job(dir, "a"),
                                  stubborn_job(dir, "b")}));
    Process killed(
        dir, {{"--gpus", "0,1", "--kill-after", "1", "--joblog", joblog.string(), input.string()}});
    // Both jobs must be past their look at old-pids before it exists: a job of this run that
    // is still in its loop when old-pids appears would note itself and its sibling as alive,
    // and then find DIR/fast and end on its own instead of waiting for the guard.
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "sleeping").size() == 2; }));
    ASSERT_TRUE(eventually([&] { return joblog_records(joblog).size() == 1; }));
    killed.signal(SIGKILL);
    killed.wait();
    fs::rename(dir / "pids", dir / "old-pids");
    write_file(dir / "fast", "");

    // At once: the old jobs ignore SIGTERM and are still there for a second.
    const auto resumed = run(dir, {{"--gpus", "0,1", "--kill-after", "1", "--joblog",
                                    joblog.string(), "--resume", input.string()}});
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_FALSE(fs::exists(dir / "alive"))
        << "a job started while the killed run's job was alive: " << read_file(dir / "alive")
        << resumed.err;
    const auto ran = line_counts(dir / "ran");
    EXPECT_EQ(ran, (std::map<std::string, int>{{"done", 1}, {"a", 2}, {"b", 2}}));
}

// The guard of the run whose job log is `joblog`: it holds the log open.
std::optional<pid_t> guard_of(const fs::path& joblog)
{
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos ||
            read_file(entry.path() / "comm") != "gpusched-guard\n") {
            continue;
        }
        std::error_code error;
        for (const auto& fd : fs::directory_iterator(entry.path() / "fd", error)) {
            if (fs::read_symlink(fd.path(), error) == joblog) {
                return std::stoi(name);
            }
        }
    }
    return std::nullopt;
}

TEST(Crash, TheGuardFindsJobsThatClosedTheMarkerOrLeftTheirGroup)
{
    TempDir dir;
    const auto closes_everything = fmt::format(
        "for fd in 3 4 5 6 7 8 9; do eval \"exec $fd>&-\"; done; {}", stubborn_job(dir, "closed"));
    write_file(dir / "left.sh", fmt::format("for fd in 3 4 5 6 7 8 9; do eval \"exec $fd>&-\"; "
                                            "done\n{}\n",
                                            stubborn_job(dir, "left")));
    const auto leaves_group = fmt::format("setsid sh {}/left.sh & wait", dir.path().string());
    Process killed(dir, {{"--gpus", "0,1", "--kill-after", "0.5"},
                         join_lines({closes_everything, leaves_group})});
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 2; }));
    killed.signal(SIGKILL);
    killed.wait();
    const auto pids = noted_pids(dir);
    ASSERT_EQ(pids.size(), 2u);
    EXPECT_TRUE(eventually([&] { return std::none_of(pids.begin(), pids.end(), process_alive); }))
        << "the environment tells them apart";
}

TEST(Crash, TheGuardSendsEachProcessOneSigterm)
{
    TempDir dir;
    const auto counts_terms =
        fmt::format("trap 'echo TERM >> {0}/terms' TERM; echo $$ >> {0}/pids; "
                    "while :; do sleep 0.05; done",
                    dir.path().string());
    Process killed(dir, {{"--gpus", "0", "--kill-after", "1"}, counts_terms + "\n"});
    // The job can write its pid before the scheduler logs its start: wait for both, so that
    // the kill falls after the line this test reads back.
    ASSERT_TRUE(eventually(
        [&] { return fs::exists(dir / "pids") && has(killed.err_so_far(), "job 1 started"); }));
    killed.signal(SIGKILL);
    killed.wait();
    const auto pid = std::stoi(read_file(dir / "pids"));
    ASSERT_TRUE(eventually([&] { return !process_alive(pid); }));
    EXPECT_EQ(read_file(dir / "terms"), "TERM\n");
    // The guard appends to the log it shares with the scheduler, once it is done.
    EXPECT_TRUE(eventually([&] {
        return has(killed.err_so_far(), "ended without stopping its jobs");
    })) << killed.err_so_far();
    EXPECT_TRUE(has(killed.err_so_far(), "job 1 started")) << killed.err_so_far();
}

TEST(Crash, AKilledOrStoppedGuardDoesNotSpoilTheRun)
{
    for (const int signal : {SIGKILL, SIGSTOP}) {
        TempDir dir;
        const auto joblog = dir / "jobs.log";
        Process gpusched(
            dir, {{"--gpus", "0", "--joblog", joblog.string()}, slow_job(dir, "only") + "\n"});
        ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 1; }));
        const auto guard = guard_of(joblog);
        ASSERT_TRUE(guard.has_value());
        kill(*guard, signal);
        write_file(dir / "fast", "");
        const auto result = gpusched.wait(20s);
        EXPECT_FALSE(result.timed_out) << "signal " << signal;
        EXPECT_EQ(result.exit_status, 0) << "signal " << signal << ": " << result.err;
        kill(*guard, SIGKILL);
    }
}

TEST(Joblog, AFileThatIsNoJobLogIsNeverAppendedTo)
{
    TempDir dir;
    const auto commands = dir / "commands.txt";
    write_file(commands, "true\n");
    const auto result =
        run(dir, {{"--gpus", "0", "--joblog", commands.string(), commands.string()}});
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_TRUE(has(result.err, "is not a job log")) << result.err;
    EXPECT_EQ(read_file(commands), "true\n");
}

TEST(Resume, ASecondRunOnTheSameLogWaitsForTheFirst)
{
    TempDir dir;
    const auto joblog = dir / "jobs.log";
    const auto input = dir / "commands.txt";
    write_file(input, slow_job(dir, "only") + "\n");
    Process first(dir, {{"--gpus", "0", "--joblog", joblog.string(), input.string()}});
    ASSERT_TRUE(eventually([&] { return line_counts(dir / "ran").size() == 1; }));
    TempDir other;
    Process second(other,
                   {{"--gpus", "1", "--joblog", joblog.string(), "--resume", input.string()}});
    ASSERT_TRUE(eventually([&] { return has(second.err_so_far(), "is in use by another"); }))
        << second.err_so_far();
    EXPECT_EQ(line_counts(dir / "ran").at("only"), 1) << "the second run must not start it";
    write_file(dir / "fast", "");
    EXPECT_EQ(first.wait().exit_status, 0);
    const auto resumed = second.wait();
    EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
    EXPECT_TRUE(has(resumed.err, "1 skipped")) << resumed.err;
    EXPECT_EQ(line_counts(dir / "ran").at("only"), 1) << "it ran once, in the first run";
}

} // namespace
} // namespace gpusched::testing
