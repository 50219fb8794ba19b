// The worker's spool with real files: what is owed survives the worker, what was sent does
// not come back, and a live worker's file is never taken from it.
#include <gpusched/queue/redis/result_spool.hpp>

#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;

class SpoolDirectory : public ::testing::Test {
protected:
    void SetUp() override { m_dir = testing::make_temp_directory("gpusched-spool"); }
    void TearDown() override { fs::remove_all(m_dir); }

    static OwedResult result(std::int64_t id)
    {
        return OwedResult{JobResult{id, JobState::succeeded, 0, 0, "GPU-a0", 1.5, 2.5, ""},
                          "host", "7", "m1"};
    }

    fs::path m_dir;
};

TEST_F(SpoolDirectory, WhatADeadWorkerOwedIsAdoptedOnceAndWhatItSentIsNot)
{
    {
        ResultSpool dead(m_dir, "queue", "dead");
        Owed sent{0, "dead", result(1)};
        Owed owed{0, "dead", result(2)};
        Owed returned{0, "dead", GiveBack{3, "m1"}};
        ASSERT_TRUE(dead.add(sent));
        ASSERT_TRUE(dead.add(owed));
        ASSERT_TRUE(dead.add(returned));
        dead.mark_sent(sent.number);
        EXPECT_EQ(dead.owed(), 2u);
    } // dies owing two: its lock goes with it, its file stays

    ResultSpool next(m_dir, "queue", "next");
    const auto adopted = next.adopt_orphans();
    ASSERT_EQ(adopted.size(), 2u);
    const auto& first = std::get<OwedResult>(adopted[0].what);
    EXPECT_EQ(first.result.id, 2);
    EXPECT_EQ(first.result.state, JobState::succeeded);
    EXPECT_EQ(first.batch, "7");
    EXPECT_EQ(first.result.runtime, 2.5);
    EXPECT_EQ(adopted[0].worker, "dead") << "sent for the worker whose list holds the job";
    EXPECT_EQ(std::get<GiveBack>(adopted[1].what).id, 3);
    EXPECT_FALSE(fs::exists(m_dir / "queue" / "dead.spool"));
    EXPECT_EQ(next.owed(), 2u) << "adopted entries are owed by the adopter, in its own file";
    EXPECT_TRUE(next.adopt_orphans().empty());
}

TEST_F(SpoolDirectory, ALiveWorkersFileIsLeftToIt)
{
    ResultSpool alive(m_dir, "queue", "alive");
    Owed owed{0, "alive", result(1)};
    ASSERT_TRUE(alive.add(owed));
    ResultSpool other(m_dir, "queue", "other");
    EXPECT_TRUE(other.adopt_orphans().empty());
    EXPECT_TRUE(fs::exists(alive.path()));
}

TEST_F(SpoolDirectory, AFileWithNothingOwedIsCutAndRemovedAtTheEnd)
{
    auto spool = std::make_unique<ResultSpool>(m_dir, "queue", "worker");
    Owed owed{0, "worker", result(1)};
    ASSERT_TRUE(spool->add(owed));
    EXPECT_GT(fs::file_size(spool->path()), 0u);
    spool->mark_sent(owed.number);
    EXPECT_EQ(fs::file_size(spool->path()), 0u);
    const auto path = spool->path();
    spool->close_if_settled();
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(SpoolDirectory, DamagedLinesAreSkippedAndTheRestIsSent)
{
    fs::create_directories(m_dir / "queue");
    std::ofstream(m_dir / "queue" / "crashed.spool")
        << "{\"n\":1,\"worker\":\"crashed\",\"give_back\":\"4\",\"marker\":\"m\"}\n"
        << "garbage\n"
        << "{\"n\":2,\"worker\":\"crashed\",\"result\":{\"id\":\"5\"";
    ResultSpool next(m_dir, "queue", "next");
    const auto adopted = next.adopt_orphans();
    ASSERT_EQ(adopted.size(), 1u);
    EXPECT_EQ(std::get<GiveBack>(adopted[0].what).id, 4) << "ids written as strings are read";
}

TEST_F(SpoolDirectory, APlantedSymlinkIsNotFollowed)
{
    fs::create_directories(m_dir / "queue");
    std::ofstream(m_dir / "victim") << "precious\n";
    fs::create_symlink(m_dir / "victim", m_dir / "queue" / "worker.spool");
    {
        // The worker's own file replaces the link; nothing is written through it.
        ResultSpool worker(m_dir, "queue", "worker");
        Owed owed{0, "worker", result(1)};
        ASSERT_TRUE(worker.add(owed));
        EXPECT_FALSE(fs::is_symlink(worker.path()));
    }
    fs::remove(m_dir / "queue" / "worker.spool");
    fs::create_symlink(m_dir / "victim", m_dir / "queue" / "planted.spool");
    ResultSpool next(m_dir, "queue", "next");
    EXPECT_TRUE(next.adopt_orphans().empty());
    EXPECT_TRUE(fs::is_symlink(m_dir / "queue" / "planted.spool"));
    std::ifstream victim(m_dir / "victim");
    std::string text;
    std::getline(victim, text);
    EXPECT_EQ(text, "precious");
}

TEST_F(SpoolDirectory, APlantedFifoIsSkippedWithoutWaiting)
{
    fs::create_directories(m_dir / "queue");
    ASSERT_EQ(mkfifo((m_dir / "queue" / "evil.spool").c_str(), 0600), 0);
    ResultSpool next(m_dir, "queue", "next");
    EXPECT_TRUE(next.adopt_orphans().empty());
}

// A full disk (a 64 KiB tmpfs) refuses some entries; those written before and after stay
// whole, and the next worker reads every one of them.
TEST_F(SpoolDirectory, AFullDiskLosesOnlyWhatCouldNotBeWritten)
{
    if (geteuid() != 0) {
        GTEST_SKIP() << "mounting a tmpfs needs root";
    }
    const auto disk = m_dir / "disk";
    fs::create_directories(disk);
    ASSERT_EQ(std::system(("mount -t tmpfs -o size=64k tmpfs " + disk.string()).c_str()), 0);
    std::vector<std::string> written;
    {
        ResultSpool spool(disk, "queue", "full");
        auto result_of = [](int id) {
            return OwedResult{
                JobResult{id, JobState::succeeded, 0, 0, "GPU-a0", 1.5, 2.5, std::string(900, 'x')},
                "host", "7", "m1"};
        };
        // Fill the disk but for a few KiB, then write until entries are refused.
        std::ofstream(disk / "filler") << std::string(60 * 1024 - 4096, 'f');
        int id = 1;
        int refused = 0;
        for (; refused < 3 && id < 200; ++id) {
            Owed owed{0, "full", result_of(id)};
            if (spool.add(owed)) {
                written.push_back(std::to_string(id));
            } else {
                ++refused;
            }
        }
        fs::remove(disk / "filler");
        Owed after{0, "full", result_of(id)};
        ASSERT_TRUE(spool.add(after));
        written.push_back(std::to_string(id));
        EXPECT_EQ(refused, 3);
    }
    std::vector<std::string> adopted;
    {
        ResultSpool next(disk, "queue", "next");
        for (const auto& owed : next.adopt_orphans()) {
            adopted.push_back(std::to_string(std::get<OwedResult>(owed.what).result.id));
        }
    }
    EXPECT_EQ(std::system(("umount " + disk.string()).c_str()), 0);
    EXPECT_EQ(adopted, written) << "a line cut short by the full disk spoiled the next one";
}

} // namespace
} // namespace gpusched::queue
