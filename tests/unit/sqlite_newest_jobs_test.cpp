// A local queue read for the shells' completion: opened to read only, it makes nothing where
// there is no database and leaves no file beside one, and its newest jobs come highest id
// first, by JobsWanted's rule, as many as asked.
#include <gpusched/queue/sqlite/sqlite_queue.hpp>
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>

#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class NewestJobs : public ::testing::Test {
protected:
    void SetUp() override { m_dir = testing::make_temp_directory("gpusched-db"); }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path db_path() const { return m_dir / "queue.db"; }

    std::set<std::string> files() const
    {
        std::set<std::string> names;
        for (const auto& entry : fs::directory_iterator(m_dir)) {
            names.insert(entry.path().filename().string());
        }
        return names;
    }

    // Jobs 1 to 6 of queue q: 1 failed, 2 succeeded, 3 running, 4 queued, 5 cancelled, and
    // 6 queued with label `sweep` by bob; then the database closed.
    void make_queue() const
    {
        Database database(db_path(), 1s);
        prepare_sqlite_queue_schema(database);
        SqliteQueue queue(database, "q");
        queue.submit({{"false"}, {"true"}, {"sleep 60"}, {"echo 4"}, {"echo 5"}}, {});
        for (const auto state : {JobState::failed, JobState::succeeded}) {
            const auto taken = queue.take("w");
            ASSERT_TRUE(queue.finish("w", JobResult{taken->id, state, 0, 0, "0", 100.0, 1.0, ""}));
        }
        ASSERT_TRUE(queue.take("w"));
        ASSERT_EQ(queue.cancel(5), CancelOutcome::removed);
        const BatchOrigin bob{{"/tmp", {}, 022, {}}, {1001, "bob", ""}, "sweep"};
        queue.submit({{"python train.py"}}, {0, false, &bob});
    }

    static std::vector<std::int64_t> ids_of(const std::vector<JobRecord>& jobs)
    {
        std::vector<std::int64_t> ids;
        for (const auto& job : jobs) {
            ids.push_back(job.id);
        }
        return ids;
    }

    fs::path m_dir;
};

TEST_F(NewestJobs, NoDatabaseIsMadeWhereThereIsNone)
{
    EXPECT_THROW(SqliteQueueBackend(db_path(), "q", read_only), QueueGone);
    EXPECT_TRUE(files().empty());
}

TEST_F(NewestJobs, AClosedDatabaseIsReadWithoutAFileMadeBesideIt)
{
    make_queue();
    ASSERT_EQ(files(), std::set<std::string>{"queue.db"}) << "closed, its -wal is gone";
    SqliteQueueBackend backend(db_path(), "q", read_only);
    EXPECT_EQ(ids_of(backend.newest({})), (std::vector<std::int64_t>{6, 5, 4, 3, 2, 1}));
    EXPECT_EQ(files(), std::set<std::string>{"queue.db"});
    EXPECT_THROW(backend.cancel(4), DatabaseError) << "nothing is changed";
}

TEST_F(NewestJobs, ADatabaseInUseIsReadWithTheLatestCommits)
{
    make_queue();
    Database writer(db_path(), 1s);
    SqliteQueue queue(writer, "q");
    queue.submit({{"echo 7"}}, {}); // in the -wal, not yet in the file
    SqliteQueueBackend backend(db_path(), "q", read_only);
    EXPECT_EQ(backend.newest({}).front().id, 7);
}

TEST_F(NewestJobs, TheStatesThePrefixTheUserAndTheMostAsked)
{
    make_queue();
    SqliteQueueBackend backend(db_path(), "q", read_only);
    EXPECT_EQ(ids_of(backend.newest({{JobState::queued, JobState::running}})),
              (std::vector<std::int64_t>{6, 4, 3}));
    EXPECT_EQ(ids_of(backend.newest({{JobState::failed, JobState::cancelled}})),
              (std::vector<std::int64_t>{5, 1}));
    EXPECT_EQ(ids_of(backend.newest({{}, "sw"})), (std::vector<std::int64_t>{6}));
    EXPECT_EQ(ids_of(backend.newest({{}, "3"})), (std::vector<std::int64_t>{3}));
    EXPECT_EQ(ids_of(backend.newest({{}, "", "ann"})), (std::vector<std::int64_t>{5, 4, 3, 2, 1}))
        << "jobs queued without a user are anyone's; bob's are not ann's";
    EXPECT_EQ(ids_of(backend.newest({{}, "", std::nullopt, 2})), (std::vector<std::int64_t>{6, 5}));
    const auto jobs = backend.newest({{}, "6"});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].command, "python train.py");
    EXPECT_EQ(jobs[0].name, "sweep");
    EXPECT_EQ(jobs[0].submitter.user, "bob");
    EXPECT_EQ(jobs[0].state, JobState::queued);
    SqliteQueueBackend other(db_path(), "other", read_only);
    EXPECT_TRUE(other.newest({}).empty()) << "another queue of the database";
}

} // namespace
} // namespace gpusched::queue
