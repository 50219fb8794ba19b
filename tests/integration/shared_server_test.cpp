// A server shared with people one does not trust: what another local account can do to a
// user's queue (plant a database behind a link), tried as that account, with nothing of the
// victim's touched, read or run.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

uid_t uid_of(const std::string& user)
{
    const passwd* account = getpwnam(user.c_str());
    return account != nullptr ? account->pw_uid : static_cast<uid_t>(-1);
}

// A directory of `user`'s, mode 0755, at `path`.
void make_directory_of(const std::string& user, const fs::path& path, mode_t mode = 0755)
{
    fs::create_directories(path);
    ASSERT_EQ(chown(path.c_str(), uid_of(user), static_cast<gid_t>(-1)), 0);
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

// `PROGRAM ARGS...` run as `user`.
Finished run_as(const TempDir& dir, const std::string& user, std::vector<std::string> command)
{
    command.insert(command.begin(), {"-u", user, "--"});
    LaunchOptions options{command};
    options.program = fs::exists("/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser";
    return run(dir, options);
}

class LinkedDatabase : public ::testing::Test {
protected:
    void SetUp() override
    {
        const auto user = second_user();
        if (!user) {
            GTEST_SKIP() << "a second account needs root";
        }
        m_user = *user;
        // Both accounts can reach their directories below it.
        ASSERT_EQ(chmod(m_dir.path().c_str(), 0755), 0);
        make_directory_of(m_user, m_dir / "theirs");
        fs::create_directories(m_dir / "mine");
        ASSERT_EQ(chmod((m_dir / "mine").c_str(), 0700), 0);
    }

    Finished submit_to(const fs::path& database, const std::string& command) const
    {
        return run(m_dir, {{"submit", "--db", database.string(), "--no-start"}, command + "\n"});
    }

    std::string m_user;
    TempDir m_dir;
};

// mine/q.db, a link of ours into a directory of theirs: SQLite would keep the -wal and -shm
// beside the real file, where they can plant a log that adds their job with our uid.
TEST_F(LinkedDatabase, ALinkIntoAnotherUsersDirectoryIsRefusedAndNothingIsMadeThere)
{
    const auto pwned = m_dir / "pwned";
    // Their queue, with their command in it, and our link to it.
    const auto planted =
        run_as(m_dir, m_user,
               {binary().string(), "submit", "--db", (m_dir / "theirs/q.db").string(), "--no-start",
                "--", "touch " + pwned.string()});
    ASSERT_EQ(planted.exit_status, 0) << planted.err;
    fs::create_symlink(m_dir / "theirs/q.db", m_dir / "mine/q.db");
    const auto worker =
        run(m_dir, {{"worker", "--db", (m_dir / "mine/q.db").string(), "--gpus", "0"}}, 30s);
    EXPECT_EQ(worker.exit_status, 255) << worker.err;
    EXPECT_NE(worker.err.find((m_dir / "theirs").string()), std::string::npos) << worker.err;
    EXPECT_NE(worker.err.find("belongs to " + m_user), std::string::npos) << worker.err;
    EXPECT_EQ(submit_to(m_dir / "mine/q.db", "true").exit_status, 255);

    // A link to where the database is not made yet: nothing is made there for them to take.
    fs::create_symlink(m_dir / "theirs/new.db", m_dir / "mine/new.db");
    const auto refused = submit_to(m_dir / "mine/new.db", "true");
    EXPECT_EQ(refused.exit_status, 255) << refused.err;
    EXPECT_NE(refused.err.find((m_dir / "mine/new.db").string() + " (which is " +
                               (m_dir / "theirs/new.db").string() + "): its directory"),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("belongs to " + m_user), std::string::npos) << refused.err;
    for (const auto* name : {"new.db", "new.db-wal", "new.db-shm", "q.db-wal"}) {
        EXPECT_FALSE(fs::exists(m_dir / "theirs" / name)) << name;
    }
    EXPECT_FALSE(fs::exists(pwned)) << "their command ran as us";
}

// A directory of ours inside one of theirs: they can rename it and put one of theirs there.
TEST_F(LinkedDatabase, ADirectoryAnotherUserCanReplaceIsRefused)
{
    fs::create_directories(m_dir / "theirs/ours");
    ASSERT_EQ(chmod((m_dir / "theirs/ours").c_str(), 0700), 0);
    const auto inside = submit_to(m_dir / "theirs/ours/q.db", "true");
    EXPECT_EQ(inside.exit_status, 255) << inside.err;
    EXPECT_NE(inside.err.find((m_dir / "theirs").string() + ", which belongs to " + m_user),
              std::string::npos)
        << inside.err;

    // Writable by others above ours: refused, unless sticky (as /tmp is), where nobody may
    // rename what is not theirs.
    fs::create_directories(m_dir / "open/ours");
    ASSERT_EQ(chmod((m_dir / "open").c_str(), 0777), 0);
    ASSERT_EQ(chmod((m_dir / "open/ours").c_str(), 0700), 0);
    const auto open = submit_to(m_dir / "open/ours/q.db", "true");
    EXPECT_EQ(open.exit_status, 255) << open.err;
    EXPECT_NE(open.err.find("is writable by other users"), std::string::npos) << open.err;
    ASSERT_EQ(chmod((m_dir / "open").c_str(), 01777), 0);
    EXPECT_EQ(submit_to(m_dir / "open/ours/q.db", "true").exit_status, 0);

    // A link of theirs, in a sticky directory, to a database of ours.
    fs::create_directories(m_dir / "sticky");
    ASSERT_EQ(chmod((m_dir / "sticky").c_str(), 01777), 0);
    const auto placed =
        run_as(m_dir, m_user,
               {"/bin/ln", "-s", (m_dir / "mine/q.db").string(), (m_dir / "sticky/q.db").string()});
    ASSERT_EQ(placed.exit_status, 0) << placed.err;
    const auto through = submit_to(m_dir / "sticky/q.db", "true");
    EXPECT_EQ(through.exit_status, 255) << through.err;
    EXPECT_NE(through.err.find("is a link of " + m_user + "'s"), std::string::npos) << through.err;
}

// Links among our own directories are followed: the database, its -wal and its output live
// where it really is.
TEST_F(LinkedDatabase, ALinkAmongOurOwnDirectoriesIsFollowed)
{
    fs::create_directories(m_dir / "mine/real");
    fs::create_symlink("real/q.db", m_dir / "mine/q.db");
    const auto ran = m_dir / "mine/ran";
    ASSERT_EQ(submit_to(m_dir / "mine/q.db", "touch " + ran.string()).exit_status, 0);
    Process worker(m_dir, {{"worker", "--db", (m_dir / "mine/q.db").string(), "--gpus", "0"}});
    EXPECT_TRUE(eventually([&] { return fs::exists(ran); }));
    EXPECT_TRUE(fs::is_regular_file(m_dir / "mine/real/q.db"));
    EXPECT_TRUE(fs::is_symlink(m_dir / "mine/q.db"));
    EXPECT_FALSE(fs::exists(m_dir / "mine/q.db-wal")) << "the log is beside the real file";
    worker.signal(SIGTERM);
    EXPECT_FALSE(worker.wait(20s).timed_out);
}

} // namespace
} // namespace gpusched::testing
