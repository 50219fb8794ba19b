// A server shared with people one does not trust: what another local account can do to a
// user's queue (plant a database behind a link, read the secrets and output a queue keeps,
// take over a label), tried as that account, with nothing of the victim's touched, read or
// run.
#include "harness.hpp"
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* k_secret = "hunter2-s3cr3t";

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

std::vector<std::int64_t> ids_submitted(const Finished& submitted)
{
    EXPECT_EQ(submitted.exit_status, 0) << submitted.err;
    std::vector<std::int64_t> ids;
    if (submitted.exit_status == 0) {
        const auto printed = nlohmann::json::parse(submitted.out);
        for (const auto& id : printed["ids"]) {
            ids.push_back(id.get<std::int64_t>());
        }
    }
    return ids;
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
               {reachable_by_others(binary()).string(), "submit", "--db",
                (m_dir / "theirs/q.db").string(), "--no-start", "--", "touch", pwned.string()});
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

// What a queue keeps of its submitters (their environment, their jobs' output) is theirs to
// read alone, in a project directory every user can read.
class QueueSecrets : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    QueueSecrets() : QueueFixture(GetParam()) {}

    // Every value the Redis server keeps, as one text.
    std::string everything_in_redis() const
    {
        std::string all;
        for (const auto& key : split_lines(redis().cli({"--scan"}))) {
            const auto type = redis().cli({"TYPE", key});
            if (type.starts_with("string")) {
                all += redis().cli({"GET", key});
            } else if (type.starts_with("hash")) {
                all += redis().cli({"HGETALL", key});
            } else if (type.starts_with("list")) {
                all += redis().cli({"LRANGE", key, "0", "-1"});
            }
        }
        return all;
    }
};

TEST_P(QueueSecrets, AnotherUserReadsNoSecretAndNoOutput)
{
    const auto user = second_user();
    if (!user) {
        GTEST_SKIP() << "a second account needs root";
    }
    ASSERT_EQ(chmod(m_dir.path().c_str(), 0755), 0); // a project directory others may read
    auto submitted = command("submit", {"--no-start", "--json", "--", "sh", "-c", "echo \"[$SECRET_TOKEN]\""});
    submitted.env["SECRET_TOKEN"] = k_secret;
    const auto ids = ids_submitted(run(m_dir, submitted));
    ASSERT_EQ(ids.size(), 1u);
    if (on_redis()) {
        EXPECT_EQ(everything_in_redis().find(k_secret), std::string::npos)
            << "a Redis server keeps the environment of a submit that named none of it";
    } else {
        struct stat status {};
        ASSERT_EQ(stat(db().c_str(), &status), 0);
        EXPECT_EQ(status.st_mode & 07777, 0600u);
    }
    start_worker("0");
    ASSERT_EQ(gpusched("wait", {std::to_string(ids[0])}).exit_status, 0);
    const auto output = gpusched("logs", {std::to_string(ids[0])});
    // On Redis the job ran in the worker's environment, which has no such variable.
    EXPECT_EQ(output.out, on_redis() ? "[]\n" : fmt::format("[{}]\n", k_secret));
    if (!on_redis()) {
        // Everything under the project directory, read as the other user.
        const auto found =
            run_as(m_dir, *user, {"/bin/grep", "-r", "-a", "-l", k_secret, m_dir.path().string()});
        EXPECT_EQ(found.out, "") << "another user read a secret";
        const auto logs = run(m_dir, as_user(*user, command("logs", {std::to_string(ids[0])})));
        EXPECT_NE(logs.exit_status, 0);
        EXPECT_EQ(logs.out.find(k_secret), std::string::npos) << logs.out;
    }
    stop_workers();
}

// On Redis a submitter chooses what travels: --env NAME (or PREFIX*), --env NAME=VALUE, or
// --env-all; the job gets it over the worker's environment.
TEST_P(QueueSecrets, ChosenVariablesTravelWithTheJob)
{
    const auto print = "echo \"[$SECRET_TOKEN][$WANDB_PROJECT][$SET]\"";
    const auto submit_with = [&](std::vector<std::string> choice) {
        choice.insert(choice.begin(), {"--no-start", "--json"});
        choice.insert(choice.end(), {"--", "sh", "-c", print});
        auto options = command("submit", choice);
        options.env["SECRET_TOKEN"] = k_secret;
        options.env["WANDB_PROJECT"] = "sweep";
        return ids_submitted(run(m_dir, options)).at(0);
    };
    const auto chosen = submit_with({"--env", "WANDB_*", "--env", "SET=here"});
    if (on_redis()) {
        EXPECT_EQ(everything_in_redis().find(k_secret), std::string::npos);
    }
    const auto all = submit_with({"--env-all"});
    start_worker("0");
    for (const auto id : {chosen, all}) {
        ASSERT_EQ(gpusched("wait", {std::to_string(id)}).exit_status, 0);
    }
    const auto chosen_out = gpusched("logs", {std::to_string(chosen)}).out;
    EXPECT_EQ(chosen_out,
              on_redis() ? "[][sweep][here]\n" : fmt::format("[{}][sweep][here]\n", k_secret));
    EXPECT_EQ(gpusched("logs", {std::to_string(all)}).out,
              fmt::format("[{}][sweep][]\n", k_secret));
    stop_workers();
}

INSTANTIATE_TEST_SUITE_P(Stores, QueueSecrets, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

// A Redis queue is every user's: a label names the submitter's own jobs, so another user's
// `prep` neither holds nor skips our pipeline; USER/LABEL names theirs on purpose.
class SharedLabels : public ::testing::Test, public QueueFixture {
protected:
    SharedLabels() : QueueFixture(Store::redis) {}
};

TEST_F(SharedLabels, ALabelNamesTheSubmittersOwnJobs)
{
    const auto user = second_user();
    if (!user) {
        GTEST_SKIP() << "a second account needs root";
    }
    const auto theirs =
        ids_submitted(run(m_dir, as_user(*user, command("submit", {"--no-start", "--json", "--name",
                                                                   "prep", "--", "false"}))));
    ASSERT_EQ(theirs.size(), 1u);
    ASSERT_EQ(run(m_dir, as_user(*user, command("cancel", {"prep"}))).exit_status, 0);
    const auto ours = ids_submitted(
        run(m_dir, command("submit", {"--no-start", "--json", "--name", "prep", "--", "true"})));
    const auto then = ids_submitted(
        run(m_dir,
            command("submit", {"--no-start", "--json", "--after-ok", "prep", "--", "echo", "ran"})));
    ASSERT_EQ(ours.size(), 1u);
    ASSERT_EQ(then.size(), 1u);
    const auto listing = queue_status();
    const auto* waiting = listed_job(listing, then[0]);
    ASSERT_NE(waiting, nullptr);
    EXPECT_EQ((*waiting)["after_ok"], nlohmann::json::array({ours[0]})) << *waiting;

    // Named on purpose, theirs is waited for: it was cancelled, so this one is skipped.
    const auto on_theirs =
        ids_submitted(run(m_dir, command("submit", {"--no-start", "--json", "--after-ok",
                                                    *user + "/prep", "--", "true"})));
    ASSERT_EQ(on_theirs.size(), 1u);
    const auto later = queue_status();
    const auto* after_theirs = listed_job(later, on_theirs[0]);
    ASSERT_NE(after_theirs, nullptr);
    EXPECT_EQ((*after_theirs)["state"], "skipped") << *after_theirs;
    EXPECT_NE(after_theirs->dump().find(fmt::format("job {}", theirs[0])), std::string::npos)
        << *after_theirs;

    start_worker("0");
    EXPECT_EQ(gpusched("wait", {std::to_string(then[0])}).exit_status, 0);
    EXPECT_EQ(gpusched("logs", {std::to_string(then[0])}).out, "ran\n")
        << "their cancelled prep skipped our pipeline";
    stop_workers();
}

} // namespace
} // namespace gpusched::testing
