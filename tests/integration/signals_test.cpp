// Every way of stopping gpusched leaves no process behind and none a zombie.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class Signals : public ::testing::Test {
protected:
    void SetUp() override { adopt_orphans(); }

    // A job that writes its shell's pid to pids/ID, then runs `body`.
    std::string job(const std::string& body) const
    {
        return fmt::format("echo $$ > {}/pid-$GPUSCHED_JOB_ID; {}", m_dir.path().string(), body);
    }
    // The same, for a body that starts by setting a trap: the trap is set before the pid is
    // written, so a signal sent once the pid is there always finds it.
    std::string trapping_job(const std::string& trap, const std::string& body) const
    {
        return fmt::format("{}; echo $$ > {}/pid-$GPUSCHED_JOB_ID; {}", trap, m_dir.path().string(),
                           body);
    }

    bool pids_written(int count) const
    {
        for (int id = 1; id <= count; ++id) {
            if (read_file(m_dir / fmt::format("pid-{}", id)).empty()) {
                return false;
            }
        }
        return true;
    }

    void expect_nothing_left() const
    {
        const auto leftovers = leftover_processes();
        EXPECT_TRUE(leftovers.empty())
            << leftovers.size() << " processes outlived gpusched, first " << leftovers.front();
    }

    TempDir m_dir;
};

TEST_F(Signals, TermIsPassedOnToJobsAndTheirChildren)
{
    Process gpusched(
        m_dir, {{"--gpus", "0,1"},
                job("sleep 30 & sleep 30") + "\n" + job("sleep 30") + "\n" + job("true") + "\n"});
    ASSERT_TRUE(eventually([&] { return pids_written(2); }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    EXPECT_FALSE(fs::exists(m_dir / "pid-3")) << "no job starts after SIGTERM";
    EXPECT_NE(result.err.find("killed by SIGTERM"), std::string::npos) << result.err;
    expect_nothing_left();
}

TEST_F(Signals, ProcessesThatLeftTheJobsGroupAreKilledToo)
{
    Process gpusched(
        m_dir, {{"--gpus", "0", "--kill-after", "0.5"}, job("setsid sleep 30 & sleep 30") + "\n"});
    ASSERT_TRUE(eventually([&] { return pids_written(1); }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    expect_nothing_left();
}

TEST_F(Signals, OneStopEndsAChainOfSetsidProcessesThatIgnoreTerm)
{
    // Each link ignores SIGTERM and leaves its own session; each comes back to gpusched only
    // once the one before it has died, after the single SIGKILL sweep.
    Process gpusched(m_dir,
                     {{"--gpus", "0", "--kill-after", "0.5"},
                      trapping_job("trap '' TERM", "setsid sh -c 'setsid sleep 300 & sleep 30' & "
                                                   "wait") +
                          "\n"});
    ASSERT_TRUE(eventually([&] { return pids_written(1); }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_FALSE(result.timed_out) << "one SIGTERM must be enough: " << result.err;
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    expect_nothing_left();
}

TEST_F(Signals, Usr1DrainsRunningJobsAndStartsNoMore)
{
    const auto done = m_dir / "done";
    Process gpusched(
        m_dir, {{"--gpus", "0"},
                job("sleep 0.5; echo finished > " + done.string()) + "\n" + job("true") + "\n"});
    ASSERT_TRUE(eventually([&] { return pids_written(1); }));
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(done), "finished\n") << "the running job finishes undisturbed";
    EXPECT_FALSE(fs::exists(m_dir / "pid-2"));
    EXPECT_NE(result.err.find("1 command read from the input was not started"), std::string::npos)
        << result.err;
    expect_nothing_left();
}

TEST_F(Signals, BackgroundProcessesOfFinishedJobsAreStoppedToo)
{
    const auto fifo = m_dir / "queue";
    Process gpusched(m_dir, {{"--gpus", "0", "--kill-after", "0.5", "--fifo", fifo.string()}});
    ASSERT_TRUE(eventually([&] { return fs::is_fifo(fifo); }));
    {
        std::ofstream writer(fifo);
        writer << job("sleep 30 >/dev/null 2>&1 &") << "\n";
    }
    ASSERT_TRUE(eventually(
        [&] { return gpusched.err_so_far().find("job 1 finished") != std::string::npos; }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    expect_nothing_left();
}

TEST_F(Signals, StopWhileIdleOnALiveQueue)
{
    const auto fifo = m_dir / "queue";
    Process gpusched(m_dir, {{"--gpus", "0", "--fifo", fifo.string()}});
    ASSERT_TRUE(eventually([&] { return fs::is_fifo(fifo); }));
    gpusched.signal(SIGHUP);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 128 + SIGHUP) << result.err;
    expect_nothing_left();
}

} // namespace
} // namespace gpusched::testing
