// A local queue whose database is removed, or removed and made anew, while a follower has it
// open (serve, wait): the rule that tells, and the backend that stops answering from the old
// file, against real files.
#include <gpusched/queue/sqlite/database_changes.hpp>
#include <gpusched/queue/sqlite/database_file.hpp>
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>

#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(DatabaseFate, TheSameFileIsTheSame)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{1, 10}), DatabaseFate::same);
}

TEST(DatabaseFate, NoFileAtThePathIsARemoval)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, std::nullopt), DatabaseFate::removed);
}

TEST(DatabaseFate, AnotherInodeOrDeviceIsAReplacement)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{1, 11}), DatabaseFate::replaced);
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{2, 10}), DatabaseFate::replaced);
}

TEST(DatabaseFate, TheMessageNamesThePathAndWhatBecameOfIt)
{
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::removed),
              "queue database /q/queue.db was removed");
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::replaced),
              "queue database /q/queue.db was replaced by another file");
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::same), "");
}

class GoneDatabase : public ::testing::Test {
protected:
    void SetUp() override { m_dir = testing::make_temp_directory("gpusched-gone"); }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path db_path() const { return m_dir / "queue.db"; }

    // A database at the path holding one job, `command`.
    void make_queue_with(const char* command) const
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        SqliteQueue(database, "default").submit({{command}}, {});
    }

    void remove_database() const
    {
        for (const auto* suffix : {"", "-wal", "-shm"}) {
            fs::remove(db_path().string() + suffix);
        }
    }

    fs::path m_dir;
};

TEST_F(GoneDatabase, ARemovedDatabaseAnswersNothingButThatItWasRemoved)
{
    make_queue_with("echo old");
    SqliteQueueBackend backend(db_path(), "default");
    ASSERT_EQ(backend.jobs({1}).size(), 1U);
    remove_database();
    try {
        backend.jobs({1});
        FAIL() << "the removed file's job was answered";
    } catch (const QueueGone& error) {
        EXPECT_EQ(std::string(error.what()), fate_message(db_path(), DatabaseFate::removed));
    }
    EXPECT_THROW(backend.list({}), QueueGone);
}

TEST_F(GoneDatabase, OpenedAgainARemovedDatabaseIsNotMadeAnew)
{
    make_queue_with("echo old");
    remove_database();
    EXPECT_THROW(SqliteQueueBackend(db_path(), "default", WhenMissing::gone), QueueGone);
    EXPECT_FALSE(fs::exists(db_path()));
}

TEST_F(GoneDatabase, AReplacedDatabaseIsToldAndTheOneOpenedAnewAnswersFromTheNewFile)
{
    make_queue_with("echo old");
    SqliteQueueBackend old(db_path(), "default");
    ASSERT_EQ(old.jobs({1}).at(0).command, "echo old");
    // `old` keeps the removed file open, so the new one cannot have its inode.
    remove_database();
    make_queue_with("echo new");
    try {
        old.jobs({1});
        FAIL() << "job 1 of the replaced file was answered";
    } catch (const QueueGone& error) {
        EXPECT_EQ(std::string(error.what()), fate_message(db_path(), DatabaseFate::replaced));
    }
    SqliteQueueBackend again(db_path(), "default", WhenMissing::gone);
    EXPECT_EQ(again.jobs({1}).at(0).command, "echo new");
}

TEST_F(GoneDatabase, AFollowersWaitEndsWhenTheDatabaseIsRemovedAndWhenItIsMadeAnew)
{
    make_queue_with("echo old");
    SqliteQueueBackend backend(db_path(), "default");
    EXPECT_FALSE(backend.wait_for_change(50ms)) << "nothing happened";
    remove_database();
    EXPECT_TRUE(backend.wait_for_change(10s));
    make_queue_with("echo new");
    EXPECT_TRUE(backend.wait_for_change(10s));
}

} // namespace
} // namespace gpusched::queue
