// Runs the real gpusched binary on real child processes with fake GPU ids.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <sstream>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

TEST(Jobs, EveryJobRunsExactlyOnceAndNeverTwoOnOneGpu)
{
    TempDir dir;
    std::vector<std::string> commands;
    for (int i = 1; i <= 24; ++i) {
        commands.push_back(record_command(dir, 0.05 * (i % 4), fmt::format("t{}", i)));
    }
    const auto result = run(dir, {{"--gpus", "0,1,2"}, join_lines(commands)});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto records = read_records(dir / "runs.log");
    ASSERT_EQ(records.size(), 24u);
    std::set<std::string> tags;
    std::set<int> ids;
    for (const auto& record : records) {
        tags.insert(record.tag);
        ids.insert(record.job_id);
        EXPECT_TRUE(record.gpu == "0" || record.gpu == "1" || record.gpu == "2") << record.gpu;
        EXPECT_EQ(record.tag, fmt::format("t{}", record.job_id)) << "job ids follow input order";
    }
    EXPECT_EQ(tags.size(), 24u);
    EXPECT_EQ(ids.size(), 24u);
    EXPECT_EQ(overlaps(records), "");
}

TEST(Jobs, EightEqualJobsOnFourGpusTakeTwoJobLengths)
{
    TempDir dir;
    constexpr double k_length = 0.5;
    std::vector<std::string> commands;
    for (int i = 1; i <= 8; ++i) {
        commands.push_back(record_command(dir, k_length, fmt::format("t{}", i)));
    }
    const auto result = run(dir, {{"--gpus", "0-3"}, join_lines(commands)});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto records = read_records(dir / "runs.log");
    ASSERT_EQ(records.size(), 8u);
    EXPECT_EQ(overlaps(records), "");
    std::map<std::string, int> per_gpu;
    double first_start = records[0].start;
    double last_end = records[0].end;
    for (const auto& record : records) {
        ++per_gpu[record.gpu];
        first_start = std::min(first_start, record.start);
        last_end = std::max(last_end, record.end);
    }
    EXPECT_EQ(per_gpu, (std::map<std::string, int>{{"0", 2}, {"1", 2}, {"2", 2}, {"3", 2}}))
        << "first-in first-out hand-out spreads the jobs evenly";
    const double span = last_end - first_start;
    EXPECT_GE(span, 2 * k_length);
    // Two waves, not three or more; the margin absorbs a loaded CI machine.
    EXPECT_LT(span, 3 * k_length + 1.0) << "the jobs ran in more than two waves";
}

TEST(Jobs, RunsAsSimpleGpuSchedulerWithItsCommandLine)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "0", "1"},
                  join_lines({record_command(dir, 0.1, "a"), record_command(dir, 0.1, "b")}),
                  std::nullopt,
                  {},
                  binary().parent_path() / "simple_gpu_scheduler"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::set<std::string> gpus;
    for (const auto& record : read_records(dir / "runs.log")) {
        gpus.insert(record.gpu);
    }
    EXPECT_EQ(gpus, (std::set<std::string>{"0", "1"}));
}

// Most runs that overlap at any moment on one GPU; a record's GPU field may list several.
std::map<std::string, int> peak_concurrency(const std::vector<JobRecord>& records)
{
    std::map<std::string, std::vector<std::pair<double, int>>> events;
    for (const auto& record : records) {
        std::istringstream gpus(record.gpu);
        std::string gpu;
        while (std::getline(gpus, gpu, ',')) {
            events[gpu].emplace_back(record.start, 1);
            events[gpu].emplace_back(record.end, -1);
        }
    }
    std::map<std::string, int> peaks;
    for (auto& [gpu, changes] : events) {
        std::sort(changes.begin(), changes.end()); // an end sorts before a start at the same time
        int running = 0;
        for (const auto& [time, change] : changes) {
            running += change;
            peaks[gpu] = std::max(peaks[gpu], running);
        }
    }
    return peaks;
}

// --nice: each job, and all it starts, runs at that niceness from its first instruction;
// the job is still its own process group (a stop reaches all of it), with its pid as the
// leader's.
TEST(Jobs, NiceRunsEveryJobAndItsChildrenAtThatNiceness)
{
    TempDir dir;
    // As nice(1) does, --nice adds to gpusched's own niceness (a test run under nice has one).
    errno = 0;
    const int own = getpriority(PRIO_PROCESS, 0);
    ASSERT_EQ(errno, 0);
    const auto niceness = [](int value) { return fmt::format("{}\n", std::min(value, 19)); };
    const auto at = [&](const char* name) { return (dir / name).string(); };
    const auto result =
        run(dir, {{"--gpus", "0,1", "--nice", "7"},
                  fmt::format("nice > {}; sh -c nice > {}; [ \"$(ps -o pgid= -p $$)\" -eq $$ ] && "
                              "echo own > {}\nnice > {}\n",
                              at("a"), at("a.child"), at("a.group"), at("b"))});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "a"), niceness(own + 7));
    EXPECT_EQ(read_file(dir / "a.child"), niceness(own + 7));
    EXPECT_EQ(read_file(dir / "a.group"), "own\n");
    EXPECT_EQ(read_file(dir / "b"), niceness(own + 7));

    const auto plain = run(dir, {{"--gpus", "0"}, "nice > " + at("c") + "\n"});
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    EXPECT_EQ(read_file(dir / "c"), niceness(own));
}

TEST(Jobs, NiceOutOfItsBoundsIsRefusedNamingTheOption)
{
    TempDir dir;
    for (const auto* bad : {"20", "-21", "1.5", "", "ten"}) {
        const auto result = run(dir, {{"--gpus", "0", "--nice", bad}, "true\n"});
        EXPECT_EQ(result.exit_status, 255) << bad;
        EXPECT_NE(result.err.find("--nice"), std::string::npos) << bad << ": " << result.err;
    }
}

// A niceness below gpusched's needs privilege: without it nice(1) would run the job at ours
// after a warning in its stderr, so the run is refused first, saying why. And nice(1) is
// found on gpusched's PATH as an absolute path, or the run is refused.
TEST(Jobs, ANicenessThatCannotBeGivenIsRefusedBeforeAnyJobRuns)
{
    TempDir dir;
    open_to_everyone(dir.path());
    const auto ran = (dir / "ran").string();
    if (const auto user = second_user()) {
        auto options =
            as_user(*user, LaunchOptions{{"--gpus", "0", "--nice", "-5"}, "touch " + ran + "\n"});
        const auto lowered = run(dir, std::move(options));
        EXPECT_EQ(lowered.exit_status, 255) << lowered.err;
        EXPECT_NE(lowered.err.find("--nice -5: a niceness below gpusched's own"), std::string::npos)
            << lowered.err;
        EXPECT_FALSE(std::filesystem::exists(ran));
    }
    const auto unfound =
        run(dir, {{"--gpus", "0", "--nice", "3"}, "touch " + ran + "\n", {}, {{"PATH", "."}}});
    EXPECT_EQ(unfound.exit_status, 255) << unfound.err;
    EXPECT_NE(unfound.err.find("nice(1) is not on gpusched's PATH"), std::string::npos)
        << unfound.err;
    EXPECT_FALSE(std::filesystem::exists(ran));
}

TEST(Jobs, SeveralJobsPerGpuButNeverMore)
{
    TempDir dir;
    std::vector<std::string> commands;
    for (int i = 1; i <= 8; ++i) {
        commands.push_back(record_command(dir, 0.3, fmt::format("t{}", i)));
    }
    const auto result = run(dir, {{"--gpus", "0,1", "--jobs-per-gpu", "2"}, join_lines(commands)});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto records = read_records(dir / "runs.log");
    ASSERT_EQ(records.size(), 8u);
    EXPECT_EQ(peak_concurrency(records), (std::map<std::string, int>{{"0", 2}, {"1", 2}}));
}

TEST(Jobs, SeveralGpusPerJobAreDistinctAndNeverShared)
{
    TempDir dir;
    std::vector<std::string> commands;
    for (int i = 1; i <= 6; ++i) {
        commands.push_back(record_command(dir, 0.2, fmt::format("t{}", i)));
    }
    const auto result = run(dir, {{"--gpus", "0-4", "--gpus-per-job", "2"}, join_lines(commands)});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto records = read_records(dir / "runs.log");
    ASSERT_EQ(records.size(), 6u);
    for (const auto& record : records) {
        const auto comma = record.gpu.find(',');
        ASSERT_NE(comma, std::string::npos) << record.gpu;
        EXPECT_NE(record.gpu.substr(0, comma), record.gpu.substr(comma + 1));
    }
    for (const auto& [gpu, peak] : peak_concurrency(records)) {
        EXPECT_EQ(peak, 1) << "GPU " << gpu << " was given to two jobs at once";
    }
}

TEST(Jobs, MoreGpusPerJobThanThePoolIsAUsageError)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0-3", "--gpus-per-job", "5"}, "true\n"});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("--gpus-per-job 5 is more than the 4 GPUs in the pool"),
              std::string::npos)
        << result.err;
    const auto mig = run(dir, {{"--gpus", "MIG-a,MIG-b", "--gpus-per-job", "2"}, "true\n"});
    EXPECT_EQ(mig.exit_status, 255);
    EXPECT_NE(mig.err.find("one MIG instance at most"), std::string::npos) << mig.err;
}

TEST(Jobs, JobEnvironmentNamesJobAndGpu)
{
    TempDir dir;
    const auto result =
        run(dir, {{"--gpus", "GPU-aaaa", "MIG-bbbb"},
                  join_lines({"echo \"$GPUSCHED_JOB_ID $GPUSCHED_GPU $CUDA_VISIBLE_DEVICES "
                              "$CUDA_DEVICE_ORDER $KEPT\" > " +
                                  (dir / "env1").string(),
                              "echo \"$GPUSCHED_JOB_ID $GPUSCHED_GPU $CUDA_VISIBLE_DEVICES\" > " +
                                  (dir / "env2").string()}),
                  std::nullopt,
                  {{"KEPT", "yes"}, {"CUDA_DEVICE_ORDER", std::nullopt}}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto first = read_file(dir / "env1");
    const auto second = read_file(dir / "env2");
    EXPECT_EQ(first, "1 GPU-aaaa GPU-aaaa PCI_BUS_ID yes\n");
    EXPECT_EQ(second, "2 MIG-bbbb MIG-bbbb\n");
}

TEST(Jobs, VisibleDevicesFromTheEnvironmentArePassedAsWritten)
{
    TempDir dir;
    std::vector<std::string> commands;
    for (int i = 1; i <= 6; ++i) {
        commands.push_back(record_command(dir, 0.1, fmt::format("t{}", i)));
    }
    const auto result = run(
        dir, {{}, join_lines(commands), std::nullopt, {{"CUDA_VISIBLE_DEVICES", "5,GPU-8e6b"}}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::set<std::string> gpus;
    for (const auto& record : read_records(dir / "runs.log")) {
        gpus.insert(record.gpu);
    }
    EXPECT_EQ(gpus, (std::set<std::string>{"5", "GPU-8e6b"}));
}

TEST(Jobs, AJobThatReadsStdinGetsNothingAndTheQueueIsIntact)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0"},
                                  join_lines({"cat > " + (dir / "eaten").string(),
                                              "echo second > " + (dir / "second").string(),
                                              "echo third > " + (dir / "third").string()})});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "eaten"), "");
    EXPECT_EQ(read_file(dir / "second"), "second\n");
    EXPECT_EQ(read_file(dir / "third"), "third\n");
}

// The descriptors a job sees, listed by `ls` (which adds one of its own, the highest).
std::vector<int> job_descriptors(const TempDir& dir, std::vector<std::string> args)
{
    // An inherited descriptor without close-on-exec, as a careless parent would leave.
    const int stray = open("/dev/null", O_RDONLY);
    EXPECT_GE(stray, 0);
    const int moved = dup2(stray, 17);
    close(stray);
    const auto list = dir / "fds";
    const auto result =
        run(dir, {std::move(args), "ls /proc/self/fd > " + list.string() +
                                       "; readlink /proc/self/fd/3 > " + (dir / "fd3").string() +
                                       "; readlink /proc/self/fd/4 > " + (dir / "fd4").string() +
                                       " || :" + "\n"});
    close(moved);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    std::istringstream listed(read_file(list));
    std::vector<int> fds;
    int fd = 0;
    while (listed >> fd) {
        fds.push_back(fd);
    }
    return fds;
}

TEST(Jobs, NoDescriptorOfTheSchedulerLeaksIntoJobs)
{
    TempDir dir;
    EXPECT_EQ(job_descriptors(dir, {"--gpus", "0", "--no-lock"}),
              (std::vector<int>{0, 1, 2, 3, 4, 5}))
        << "3 is the run guard's marker, 4 the job's presence token, 5 is ls's own";
    EXPECT_EQ(read_file(dir / "fd3").rfind("pipe:[", 0), 0u) << read_file(dir / "fd3");
    EXPECT_EQ(read_file(dir / "fd4").rfind("pipe:[", 0), 0u) << read_file(dir / "fd4");
}

TEST(Jobs, AJobInheritsItsLeaseAtDescriptorThree)
{
    TempDir dir;
    EXPECT_EQ(job_descriptors(dir, {"--gpus", "0"}), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}))
        << "4 is the run guard's marker, 5 the job's presence token, 6 is ls's own";
    EXPECT_EQ(read_file(dir / "fd3").rfind("socket:[", 0), 0u) << read_file(dir / "fd3");
}

TEST(Jobs, ExitStatusIsTheNumberOfFailedJobs)
{
    TempDir dir;
    const auto result = run(
        dir, {{"--gpus", "0,1"}, join_lines({"true", "exit 3", "false", "kill -9 $$", "true"})});
    EXPECT_EQ(result.exit_status, 3) << result.err;
    EXPECT_NE(result.err.find("exit 3"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("killed by SIGKILL"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("5 jobs: 2 succeeded, 3 failed"), std::string::npos) << result.err;
}

TEST(Jobs, MoreThanOneHundredFailuresExitWith101)
{
    TempDir dir;
    std::vector<std::string> commands(120, "false");
    const auto result = run(dir, {{"--gpus", "0-7", "--quiet"}, join_lines(commands)});
    EXPECT_EQ(result.exit_status, 101) << result.err;
}

TEST(Jobs, LogLinesNameJobGpuCommandOutcomeAndDuration)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "7"}, "exit 4\n"});
    EXPECT_EQ(result.exit_status, 1);
    EXPECT_NE(result.err.find("job 1 started on GPU 7: exit 4"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("job 1 failed on GPU 7: exit 4 after 0."), std::string::npos)
        << result.err;
    EXPECT_EQ(result.out, "") << "stdout belongs to the jobs";
}

TEST(Jobs, QuietSilencesTheJobLog)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0", "-q"}, "echo out\nfalse\n"});
    EXPECT_EQ(result.exit_status, 1);
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, "out\n");
}

TEST(Jobs, SpawnFailureFailsTheJobAndReturnsTheGpu)
{
    TempDir dir;
    // Executable, but its interpreter does not exist: execve fails with ENOENT at spawn.
    const auto broken_shell = dir / "broken-shell";
    write_file(broken_shell, "#!/nonexistent/interpreter\n");
    fs::permissions(broken_shell, fs::perms::owner_all);
    const auto result =
        run(dir, {{"--gpus", "0", "--shell", broken_shell.string()}, "true\ntrue\ntrue\n"}, 20s);
    ASSERT_FALSE(result.timed_out) << "a spawn failure must not leak the only GPU";
    EXPECT_EQ(result.exit_status, 3) << result.err;
    EXPECT_NE(result.err.find("job 3 could not start on GPU 0: " + broken_shell.string() +
                              ": No such file or directory"),
              std::string::npos)
        << result.err;
}

TEST(Jobs, OneMebibyteCommandRuns)
{
    TempDir dir;
    const std::string padding(1 << 20, 'x');
    const std::string command =
        ": " + padding + "; echo \"$GPUSCHED_JOB_ID ok\" > " + (dir / "long").string();
    const auto result =
        run(dir, {{"--gpus", "0"}, command + "\necho next > " + (dir / "next").string() + "\n"});
    ASSERT_EQ(result.exit_status, 0) << result.err.substr(0, 2000);
    EXPECT_EQ(read_file(dir / "long"), "1 ok\n");
    EXPECT_EQ(read_file(dir / "next"), "next\n");
}

TEST(Jobs, NulLineIsRejectedByLineNumberAndTheRunGoesOn)
{
    TempDir dir;
    const std::string input = "echo a > " + (dir / "a").string() + "\n" +
                              std::string("bad\0line\n", 9) + "echo b > " + (dir / "b").string() +
                              "\n";
    const auto result = run(dir, {{"--gpus", "0"}, input});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("stdin:2: job 2 not run: the command contains a NUL byte"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(read_file(dir / "a"), "a\n");
    EXPECT_EQ(read_file(dir / "b"), "b\n");
}

} // namespace
} // namespace gpusched::testing
