// An error in a job's bookkeeping (its record, its output files, its descriptors) concerns
// that job alone: a full disk, a removed output directory, too few descriptors. The other
// jobs run to their end, no record is lost or torn, and the exit status counts the job.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/mount.h>

#include <algorithm>
#include <csignal>
#include <map>

namespace gpusched::testing {
namespace {

// A 64 KiB tmpfs, mounted for one test (CI runs as root; elsewhere the test is skipped).
class TinyDisk {
public:
    explicit TinyDisk(const TempDir& dir) : m_path(dir / "disk")
    {
        fs::create_directory(m_path);
        m_mounted = mount("tmpfs", m_path.c_str(), "tmpfs", 0, "size=64k") == 0;
    }
    ~TinyDisk()
    {
        if (m_mounted) {
            umount2(m_path.c_str(), MNT_DETACH);
        }
    }
    TinyDisk(const TinyDisk&) = delete;
    TinyDisk& operator=(const TinyDisk&) = delete;

    bool mounted() const { return m_mounted; }
    fs::path operator/(const std::string& name) const { return m_path / name; }
    // A command that fills the disk up, and one that frees it again.
    std::string fill() const
    {
        return fmt::format("cat /dev/zero > {} 2>/dev/null; true", (m_path / "filler").string());
    }
    std::string free() const { return fmt::format("rm {}", (m_path / "filler").string()); }

private:
    fs::path m_path;
    bool m_mounted = false;
};

#define SKIP_WITHOUT_TMPFS(disk)                                                                   \
    if (!(disk).mounted()) {                                                                       \
        GTEST_SKIP() << "mounting a tmpfs needs root";                                             \
    }

// The sequence numbers of the log's records, in file order; fails the test on a torn line.
std::vector<std::string> logged_jobs(const fs::path& joblog)
{
    std::vector<std::string> jobs;
    for (const auto& line : split_lines(read_file(joblog))) {
        if (line.rfind("Seq\t", 0) == 0) {
            continue;
        }
        EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 8)
            << "a torn or glued record: " << line;
        jobs.push_back(line.substr(0, line.find('\t')));
    }
    return jobs;
}

TEST(FullDisk, JobLogRecordsWaitForSpaceAndNoneIsLost)
{
    TempDir dir;
    TinyDisk disk(dir);
    SKIP_WITHOUT_TMPFS(disk);
    const auto joblog = disk / "jobs.log";
    const auto result = run(dir, {{"--gpus", "0", "--joblog", joblog.string()},
                                  join_lines({disk.fill(), "true", "true", disk.free(), "true"})});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(has(result.err, fmt::format("write {}: No space left on device", joblog.string())))
        << result.err;
    EXPECT_EQ(logged_jobs(joblog), (std::vector<std::string>{"1", "2", "3", "4", "5"}));
    EXPECT_EQ(split_lines(read_file(joblog)).front().rfind("Seq\t", 0), 0u) << "header first";
}

TEST(FullDisk, RecordsThatCannotBeWrittenAreNamedAndCounted)
{
    TempDir dir;
    TinyDisk disk(dir);
    SKIP_WITHOUT_TMPFS(disk);
    const auto joblog = disk / "jobs.log";
    // Job 2 runs on beside the one that fills the disk, and must not be stopped by it.
    const auto result = run(
        dir,
        {{"--gpus", "0,1", "--joblog", joblog.string()},
         join_lines({disk.fill(), fmt::format("sleep 0.5; touch {}/survived", dir.path().string()),
                     "false"})});
    EXPECT_EQ(result.exit_status, 3)
        << "two jobs are not on record and one failed; each counts once: " << result.err;
    EXPECT_TRUE(fs::exists(dir / "survived")) << result.err;
    EXPECT_TRUE(has(result.err, "job 1 is not in the job log")) << result.err;
    EXPECT_TRUE(has(result.err, "job 2 is not in the job log")) << result.err;
    EXPECT_TRUE(has(result.err, "No space left on device")) << result.err;
    fs::remove(disk / "filler");
    EXPECT_TRUE(logged_jobs(joblog).empty()) << "nothing half-written stays behind";
}

TEST(FullDisk, InfoFilesAreCompleteOrReportedMissing)
{
    TempDir dir;
    TinyDisk disk(dir);
    SKIP_WITHOUT_TMPFS(disk);
    const auto output = disk / "out";
    const auto result = run(dir, {{"--gpus", "0", "--output-dir", output.string()},
                                  join_lines({"echo hello", disk.fill(), "true"})});
    for (const auto* job : {"2", "3"}) {
        const auto info = output / (std::string(job) + ".info");
        if (fs::exists(info)) {
            EXPECT_TRUE(has(read_file(info), "\nstopped: no\n")) << "cut short: " << info;
        } else {
            EXPECT_TRUE(
                has(result.err, fmt::format("{}: No space left on device", info.string())) ||
                has(result.err, fmt::format("job {} could not start", job)))
                << result.err;
        }
    }
    EXPECT_NE(result.exit_status, 0) << result.err;
    EXPECT_NE(result.exit_status, 255) << result.err;
    EXPECT_TRUE(has(read_file(output / "1.info"), "\nexit: 0\n"));
}

TEST(OutputDir, RemovedDuringTheRunFailsOnlyTheJobsThatNeedIt)
{
    TempDir dir;
    const auto output = dir / "out";
    const auto result =
        run(dir, {{"--gpus", "0,1", "--output-dir", output.string()},
                  join_lines({fmt::format("sleep 1; touch {}/long-done", dir.path().string()),
                              fmt::format("rm -rf {}", output.string()), "sleep 0.2", "true"})});
    EXPECT_TRUE(fs::exists(dir / "long-done")) << "the running job was not stopped: " << result.err;
    EXPECT_TRUE(
        has(result.err, fmt::format("job 3 could not start on GPU")) &&
        has(result.err, fmt::format("open {}/3.out: No such file or directory", output.string())))
        << result.err;
    EXPECT_NE(result.exit_status, 255) << result.err;
    EXPECT_GE(result.exit_status, 2) << "jobs 3 and 4 failed: " << result.err;
}

TEST(Descriptors, TooFewFailOnlyTheJobsThatGetNone)
{
#if defined(__SANITIZE_ADDRESS__)
    // UndefinedBehaviorSanitizer checks a type by reading memory through a pipe of its own,
    // which it cannot make once the descriptors run out: it would report a false error.
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    TempDir dir;
    std::vector<std::string> commands(40, "sleep 0.3");
    const auto input = dir / "commands.txt";
    write_file(input, join_lines(commands));
    const auto result =
        run(dir, {{"-c", fmt::format("ulimit -n 30; exec {} --tag --gpus 0 --jobs-per-gpu 40 {}",
                                     binary().string(), input.string())},
                  std::nullopt,
                  std::nullopt,
                  {},
                  "/bin/sh"});
    std::size_t not_started = 0;
    for (const auto& line : split_lines(result.err)) {
        if (has(line, "could not start")) {
            ++not_started;
            EXPECT_TRUE(has(line, "Too many open files")) << line;
        }
    }
    EXPECT_GT(not_started, 0u) << "the limit must bite for this test to mean anything";
    EXPECT_LT(not_started, 40u) << result.err;
    EXPECT_EQ(result.exit_status, static_cast<int>(not_started)) << result.err;
}

TEST(LockDirectory, RemovedDuringTheRunFailsNoJob)
{
    TempDir dir;
    const auto locks = dir / "locks";
    const auto queue = dir / "queue";
    Process gpusched(dir,
                     {{"--gpus", "0,1", "--lock-dir", locks.string(), "--fifo", queue.string()}});
    ASSERT_TRUE(eventually([&] { return fs::exists(queue); }));
    // The run writes job 1's lease record just after starting it: the job waits for the
    // record, or the run would only make the directory anew when it writes it.
    write_file(queue, fmt::format("until [ -n \"$(ls -A {0})\" ]; do sleep 0.05; done; rm -rf {0}; "
                                  "sleep 1; touch {1}/first-done\n",
                                  locks.string(), dir.path().string()));
    ASSERT_TRUE(eventually([&] { return !fs::exists(locks); }));
    write_file(queue, "true\n"); // GPU 1 has had no job yet: it needs a lease now
    ASSERT_TRUE(eventually([&] { return has(gpusched.err_so_far(), "job 2 "); }));
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait();
    EXPECT_TRUE(fs::exists(dir / "first-done")) << "job 1 was not stopped: " << result.err;
    // A lease is a socket name, not a file: the directory holds only records.
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(has(result.err, "job 2 finished")) << result.err;
    EXPECT_FALSE(has(result.err, "remove it")) << result.err;
}

} // namespace
} // namespace gpusched::testing
