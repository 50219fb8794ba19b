// Host-wide leases: separate gpusched processes (schedulers and `gpusched exec`) never put
// two jobs on one GPU, a dead holder never blocks one, and the shared directory cannot be
// turned against its users.
#include "leases_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(Leases, TwoSchedulersNeverShareAGpu)
{
    std::vector<std::string> first;
    std::vector<std::string> second;
    for (int i = 0; i < 6; ++i) {
        first.push_back(job(0.2, "first"));
        second.push_back(job(0.2, "second"));
    }
    TempDir other; // its own stdout and stderr, the same lock directory
    Process a(m_dir, {{"--gpus", "0,1"}, join_lines(first)});
    Process b(other, sharing({"--gpus", "1,0"}, join_lines(second)));
    const auto a_done = a.wait();
    const auto b_done = b.wait();
    EXPECT_EQ(a_done.exit_status, 0) << a_done.err;
    EXPECT_EQ(b_done.exit_status, 0) << b_done.err;
    EXPECT_EQ(records().size(), 12u);
    EXPECT_EQ(overlaps(records()), "");
}

TEST_F(Leases, WithoutLeasesTwoSchedulersDoShareAGpu)
{
    // The contrast that shows what the leases do.
    TempDir other;
    Process a(m_dir, {{"--gpus", "0", "--no-lock"}, job(0.5, "first") + "\n"});
    Process b(other, sharing({"--gpus", "0", "--no-lock"}, job(0.5, "second") + "\n"));
    a.wait();
    b.wait();
    // The jobs write into m_dir whichever scheduler ran them.
    EXPECT_NE(overlaps(records()), "");
}

TEST_F(Leases, WaitingSchedulerTakesTheGpuWhenItsHolderEnds)
{
    // Held long enough for the second run to start under sanitizers on a slow machine.
    Process holder(m_dir, {{"exec", "--gpus", "0", "--", "sh", "-c", marked_job(3, "held")}});
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    TempDir other;
    const auto waiting = run(other, sharing({"--gpus", "0"}, job(0.1, "waited") + "\n"));
    EXPECT_EQ(waiting.exit_status, 0) << waiting.err;
    EXPECT_NE(waiting.err.find("waiting for GPU 0: it is leased by"), std::string::npos)
        << waiting.err;
    EXPECT_EQ(holder.wait().exit_status, 0);
    ASSERT_EQ(records().size(), 2u);
    EXPECT_EQ(overlaps(records()), "");
}

TEST_F(Leases, SchedulerUsesTheGpusNobodyHolds)
{
    Process holder(m_dir, {{"exec", "--gpus", "1", "--", "sh", "-c", marked_job(2, "held")}});
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    TempDir other;
    const auto result =
        run(other,
            sharing({"--gpus", "0,1"}, join_lines({job(0.1, "a"), job(0.1, "b"), job(0.1, "c")})));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    for (const auto& record : records()) {
        if (record.tag != "held") {
            EXPECT_EQ(record.gpu, "0") << "GPU 1 is leased for two seconds";
        }
    }
    holder.wait();
}

TEST_F(Leases, AKilledSchedulersJobsKeepTheirGpusUntilTheyAreGone)
{
    // The run guard stops the jobs of a killed scheduler; this one ignores SIGTERM, so it
    // runs on to its end, and holds GPU 0 all that time.
    Process killed(m_dir, {{"--gpus", "0"}, "trap '' TERM; " + marked_job(1.5, "orphan") + "\n"});
    ASSERT_TRUE(eventually([&] { return started("orphan"); }));
    killed.signal(SIGKILL);
    killed.wait();
    TempDir other;
    const auto next = run(other, sharing({"--gpus", "0"}, job(0.1, "next") + "\n"));
    EXPECT_EQ(next.exit_status, 0) << next.err;
    ASSERT_TRUE(eventually([&] { return recorded(2); }));
    EXPECT_EQ(overlaps(records()), "") << "the orphaned job still held GPU 0";
}

TEST_F(Leases, WhatAJobLeavesRunningKeepsTheLease)
{
    // The job's shell ends at once; its background child inherited the lease descriptor.
    Process first(m_dir, {{"--gpus", "0"}, "(" + marked_job(1, "background") + ") &\n"});
    EXPECT_EQ(first.wait().exit_status, 0);
    // The shell may end before its background child has run a line; the child holds the
    // lease descriptor from its fork on all the same.
    ASSERT_TRUE(eventually([&] { return started("background"); }));
    TempDir other;
    const auto next = run(other, sharing({"--gpus", "0"}, job(0.1, "next") + "\n"));
    EXPECT_EQ(next.exit_status, 0) << next.err;
    ASSERT_TRUE(eventually([&] { return recorded(2); }));
    EXPECT_EQ(overlaps(records()), "");
}

TEST_F(Leases, OneSchedulerRunsSeveralJobsPerGpuAndAnotherWaitsForAllOfThem)
{
    Process shared(m_dir, {{"--gpus", "0", "--jobs-per-gpu", "2"},
                           join_lines({marked_job(0.6, "shared"), marked_job(0.6, "shared")})});
    ASSERT_TRUE(eventually([&] { return started("shared"); }));
    TempDir other;
    const auto single = run(other, sharing({"--gpus", "0"}, job(0.1, "single") + "\n"));
    EXPECT_EQ(single.exit_status, 0) << single.err;
    EXPECT_EQ(shared.wait().exit_status, 0);
    auto all = records();
    ASSERT_EQ(all.size(), 3u);
    std::vector<JobRecord> shared_jobs;
    std::copy_if(all.begin(), all.end(), std::back_inserter(shared_jobs),
                 [](const JobRecord& record) { return record.tag == "shared"; });
    EXPECT_NE(overlaps(shared_jobs), "") << "its own two jobs share GPU 0";
    const auto single_job = std::find_if(
        all.begin(), all.end(), [](const JobRecord& record) { return record.tag == "single"; });
    for (const auto& job : shared_jobs) {
        EXPECT_GE(single_job->start, job.end) << "the other scheduler waits for both";
    }
}

TEST_F(Leases, StopWhileWaitingLeavesNothingBehind)
{
    Process holder(m_dir, {{"exec", "--gpus", "0", "--", "sh", "-c", marked_job(30, "held")}});
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    TempDir other;
    Process waiting(other, sharing({"--gpus", "0"}, job(0.1, "never") + "\n"));
    ASSERT_TRUE(
        eventually([&] { return waiting.err_so_far().find("is leased by") != std::string::npos; }));
    waiting.signal(SIGTERM);
    const auto stopped = waiting.wait(10s);
    EXPECT_FALSE(stopped.timed_out);
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    holder.signal(SIGKILL);
    holder.wait();
    // The killed exec was sh itself; its sleep is ours to reap now.
    EXPECT_TRUE(eventually([] { return leftover_processes().size() <= 1; }));
}

TEST_F(Leases, ExecRunsTheCommandOnItsGpusWithTheirLeases)
{
    // Each lease descriptor is a socket bound to its GPU's name: look its inode up in the
    // kernel's table of Unix sockets.
    const std::string name_of_fd = "i=$(readlink /proc/$$/fd/$fd); i=${i#socket:[}; "
                                   "awk -v i=\"${i%]}\" '$7 == i { print $8 }' /proc/net/unix";
    const auto result =
        run(m_dir,
            {{"exec", "-n", "2", "--gpus", "5,6,7", "--", "sh", "-c",
              "echo $CUDA_VISIBLE_DEVICES; for fd in 3 4; do " + name_of_fd + "; done; exit 7"}});
    EXPECT_EQ(result.exit_status, 7) << "the command's own status" << result.err;
    const auto lines = split_lines(result.out);
    ASSERT_EQ(lines.size(), 3u) << result.out << result.err;
    EXPECT_EQ(lines[0], "5,6");
    EXPECT_TRUE(lines[1].starts_with("@gpusched-lease/") && lines[1].ends_with("/5")) << lines[1];
    EXPECT_TRUE(lines[2].starts_with("@gpusched-lease/") && lines[2].ends_with("/6")) << lines[2];
}

TEST_F(Leases, ExecWithoutWaitingExitsWithTempfail)
{
    // Held for both refusals below, each a gpusched start (slow under sanitizers).
    Process holder(m_dir, {{"exec", "--gpus", "0", "--", "sh", "-c", marked_job(8, "held")}});
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    TempDir other;
    const auto refused = run(other, sharing({"exec", "--gpus", "0", "--no-wait", "--", "true"}));
    EXPECT_EQ(refused.exit_status, 75);
    EXPECT_NE(refused.err.find("GPU 0 by"), std::string::npos) << refused.err;
    const auto timed_out =
        run(other, sharing({"exec", "--gpus", "0", "--timeout", "0.2", "--", "true"}));
    EXPECT_EQ(timed_out.exit_status, 75) << timed_out.err;
    holder.wait();
}

// A GPU that `gpusched exec` holds is named as that, with the command it became, to a run
// that waits for it (in its status line) and to another exec: not as a run.
TEST_F(Leases, AWaiterNamesAnExecHolderByItsCommand)
{
    const auto held = m_dir / "held";
    Process holder(m_dir, {{"exec", "--gpus", "0", "--", "sh", "-c",
                            fmt::format("touch {}; exec sleep 30", held.string())}});
    ASSERT_TRUE(eventually([&] { return fs::exists(held); }));
    const passwd* account = getpwuid(getuid());
    ASSERT_NE(account, nullptr);
    const auto named = fmt::format("{}'s exec {} (sh -c touch ", account->pw_name, holder.pid());
    TempDir other;
    Process waiter(other, sharing({"--gpus", "0", "--progress"}, "true\n"));
    ASSERT_TRUE(eventually([&] {
        return waiter.err_so_far().find("held by ") != std::string::npos;
    })) << waiter.err_so_far();
    EXPECT_NE(waiter.err_so_far().find("waiting for GPU 0, held by " + named), std::string::npos)
        << waiter.err_so_far();
    EXPECT_EQ(waiter.err_so_far().find("'s run "), std::string::npos) << waiter.err_so_far();
    const auto timed_out =
        run(other, sharing({"exec", "--gpus", "0", "--timeout", "0.5", "--", "true"}));
    EXPECT_EQ(timed_out.exit_status, 75) << timed_out.err;
    EXPECT_NE(timed_out.err.find("(leased: GPU 0 by " + named), std::string::npos) << timed_out.err;
    holder.signal(SIGTERM);
    holder.wait();
    EXPECT_EQ(waiter.wait().exit_status, 0);
}

TEST_F(Leases, ExecReportsWhatItCannotRun)
{
    EXPECT_EQ(run(m_dir, {{"exec", "--gpus", "0", "--", "/nonexistent/cmd"}}).exit_status, 127);
    EXPECT_EQ(run(m_dir, {{"exec", "--gpus", "0", "--", "/"}}).exit_status, 126);
    const auto too_many = run(m_dir, {{"exec", "-n", "3", "--gpus", "0,1", "--", "true"}});
    EXPECT_EQ(too_many.exit_status, 255);
    EXPECT_NE(too_many.err.find("-n 3 is more than the 2 GPUs"), std::string::npos) << too_many.err;
    EXPECT_EQ(run(m_dir, {{"exec", "--gpus", "0"}}).exit_status, 255) << "no command";
}

TEST_F(Leases, ExecInsideAJobUsesTheLeaseTheJobHolds)
{
    const auto result =
        run(m_dir, {{"--gpus", "3"},
                    fmt::format("{} exec --timeout 5 -- sh -c 'echo inner $CUDA_VISIBLE_DEVICES'\n",
                                binary().string())});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "inner 3\n");
}

TEST_F(Leases, StatusShowsWhoHoldsEachGpu)
{
    Process holder(m_dir, {{"--gpus", "0,1"}, marked_job(30, "held") + "\n"});
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    const auto status = run(m_dir, {{"status", "--gpus", "0,1", "--json"}});
    ASSERT_EQ(status.exit_status, 0) << status.err;
    const auto listed = json_field(status.out, "gpus");
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0]["state"], "leased");
    EXPECT_EQ(listed[0]["holder"]["pid"], holder.pid());
    EXPECT_EQ(listed[0]["holder"]["uid"], getuid());
    EXPECT_EQ(listed[0]["record"]["check"], "matches");
    EXPECT_EQ(listed[0]["record"]["gpusched_pid"], holder.pid());
    ASSERT_EQ(listed[0]["record"]["jobs"].size(), 1u);
    EXPECT_NE(listed[0]["record"]["jobs"][0]["command"].get<std::string>().find("started-held"),
              std::string::npos);
    EXPECT_EQ(listed[1]["state"], "free");

    const auto table = run(m_dir, {{"status"}});
    EXPECT_NE(table.out.find("leased"), std::string::npos) << table.out;
    holder.signal(SIGTERM);
    holder.wait();
    const auto after = json_field(run(m_dir, {{"status", "--json"}}).out, "gpus");
    ASSERT_EQ(after.size(), 1u) << "without --gpus: every GPU leased or with a record";
    EXPECT_EQ(after[0]["id"], "0");
    EXPECT_EQ(after[0]["state"], "free") << "a record left behind is not a holder";
}

// The shared directory.

TEST_F(Leases, DirectoryAndRecordFilesAreSharedWhateverTheUmask)
{
    const mode_t saved = umask(077);
    const auto result = run(m_dir, {{"--gpus", "0"}, "true\n"});
    umask(saved);
    ASSERT_EQ(result.exit_status, 0) << result.err;
    struct stat status {};
    ASSERT_EQ(stat(leases().c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 07777, 01777u);
    ASSERT_EQ(stat((leases() + "/0.record").c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 07777, 0666u);
}

TEST_F(Leases, APlantedSymlinkIsNotFollowedAndStopsNoJob)
{
    fs::create_directory(leases());
    fs::permissions(leases(), fs::perms::all | fs::perms::sticky_bit);
    write_file(m_dir / "victim", "precious\n");
    fs::create_symlink(m_dir / "victim", leases() + "/0.record");
    const auto result = run(m_dir, {{"--gpus", "0"}, "touch " + (m_dir / "ran").string() + "\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("0.record is a symbolic link"), std::string::npos) << result.err;
    EXPECT_EQ(read_file(m_dir / "victim"), "precious\n");
    EXPECT_TRUE(fs::exists(m_dir / "ran"))
        << "the lease is no file: a record refused stops nothing";
}

TEST_F(Leases, APlantedHardLinkOrFifoIsNeitherWrittenNorWaitedFor)
{
    fs::create_directory(leases());
    write_file(m_dir / "victim", "precious\n");
    fs::create_hard_link(m_dir / "victim", leases() + "/0.record");
    ASSERT_EQ(mkfifo((leases() + "/1.record").c_str(), 0666), 0);
    const auto linked = run(m_dir, {{"exec", "--gpus", "0", "--", "true"}});
    EXPECT_EQ(linked.exit_status, 0) << linked.err;
    EXPECT_NE(linked.err.find("has other names"), std::string::npos) << linked.err;
    EXPECT_EQ(read_file(m_dir / "victim"), "precious\n");
    const auto fifo = run(m_dir, {{"exec", "--gpus", "1", "--", "true"}}, 10s);
    EXPECT_FALSE(fifo.timed_out);
    EXPECT_EQ(fifo.exit_status, 0) << fifo.err;
    EXPECT_NE(fifo.err.find("not a regular file"), std::string::npos) << fifo.err;
}

TEST_F(Leases, NoGpuIdLeavesTheDirectory)
{
    // The slashes of a MIG id from drivers before R470 are escaped in its lock file's name;
    // a path is no GPU id at all.
    const std::string mig = "MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab/1/0";
    const auto result = run(m_dir, {{"--gpus", mig}, "true\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(
        fs::exists(leases() + "/MIG-GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab%2F1%2F0.record"));
    const auto escaping = run(m_dir, {{"--gpus", "../escaped"}, "true\n"});
    EXPECT_EQ(escaping.exit_status, 255) << escaping.err;
    EXPECT_FALSE(fs::exists(m_dir / "escaped.record"));
    EXPECT_FALSE(fs::exists(leases() + "/%2E%2E%2Fescaped.record"));
}

TEST_F(Leases, AnUnsafeDirectoryGetsNoRecords)
{
    fs::create_directory(m_dir / "open");
    fs::permissions(m_dir / "open", fs::perms::all); // 0777, no sticky bit
    auto result = run(m_dir, {{"--gpus", "0", "--lock-dir", (m_dir / "open").string()}, "true\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("without the sticky bit"), std::string::npos) << result.err;
    EXPECT_TRUE(fs::is_empty(m_dir / "open"));

    fs::create_directory_symlink(m_dir / "open", m_dir / "link");
    result = run(m_dir, {{"--gpus", "0", "--lock-dir", (m_dir / "link").string()}, "true\n"});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("not a directory"), std::string::npos) << result.err;
    EXPECT_TRUE(fs::is_empty(m_dir / "open"));
}

} // namespace
} // namespace gpusched::testing
