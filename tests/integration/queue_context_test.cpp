// Where, with what and as whom a queued job runs: in its submitter's directory, environment
// and umask, whichever worker takes it and wherever that worker was started; and whose jobs a
// worker runs and a user may change. Each test runs on both stores.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace gpusched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class QueueContext : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    QueueContext() : QueueFixture(GetParam()) {}

    // Runs `options` with `mask` as its umask (a child takes ours when it is made).
    Finished run_with_umask(mode_t mask, LaunchOptions options)
    {
        const mode_t ours = umask(mask);
        auto result = run(m_dir, std::move(options));
        umask(ours);
        return result;
    }

    fs::path project(const std::string& name)
    {
        const auto path = m_dir / name;
        fs::create_directories(path);
        return path;
    }
};

// The case of the issue: a worker started from one project (its virtualenv active) runs a job
// submitted from another project, with another virtualenv: the job gets the second's.
TEST_P(QueueContext, AJobRunsInItsSubmittersDirectoryEnvironmentAndUmask)
{
    const auto proj1 = project("proj1");
    const auto proj2 = project("proj2");
    for (const auto& proj : {proj1, proj2}) {
        ASSERT_EQ(std::system(
                      fmt::format("python3 -m venv --without-pip {}/venv", proj.string()).c_str()),
                  0);
    }
    const auto path_with = [](const fs::path& proj) {
        return (proj / "venv/bin").string() + ":/usr/local/bin:/usr/bin:/bin";
    };
    start_worker("0", {},
                 {{"PATH", path_with(proj1)},
                  {"VIRTUAL_ENV", (proj1 / "venv").string()},
                  {"HF_HOME", "/worker/hf"}});
    const auto report = (m_dir / "report").string();
    auto options =
        submit(fmt::format("python3 -c 'import os, sys; print(os.getcwd(), sys.prefix, "
                           "os.environ.get(\"HF_HOME\"), os.environ[\"CUDA_VISIBLE_DEVICES\"], "
                           "os.environ[\"GPUSCHED_JOB_ID\"])' > {0}; umask >> {0}\n",
                           report),
               {"--wait"});
    options.cwd = proj2;
    options.env["PATH"] = path_with(proj2);
    options.env["VIRTUAL_ENV"] = (proj2 / "venv").string();
    options.env["HF_HOME"] = "/submitter/hf";
    options.env["CUDA_VISIBLE_DEVICES"] = "7"; // the worker's GPU is the job's, not this
    options.env["PWD"] = proj2.string();
    const auto submitted = run_with_umask(027, options);
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    const auto lines = split_lines(read_file(report));
    ASSERT_EQ(lines.size(), 2u) << read_file(report);
    EXPECT_EQ(lines[0],
              fmt::format("{} {} /submitter/hf 0 1", proj2.string(), (proj2 / "venv").string()));
    EXPECT_EQ(lines[1], "0027");

    const auto status = queue_status();
    ASSERT_EQ(status["recent"].size(), 1u);
    EXPECT_EQ(status["recent"][0]["directory"], proj2.string());
    EXPECT_EQ(status["recent"][0]["user"], "root");
    const auto logs = gpusched("logs", {"1"});
    EXPECT_NE(logs.err.find("in " + proj2.string()), std::string::npos) << logs.err;
}

TEST_P(QueueContext, AJobWhoseDirectoryIsGoneFailsToStartSayingWhyAndRunsNowhereElse)
{
    const auto gone = project("gone");
    auto options = submit("touch ran-here\n");
    options.cwd = gone;
    options.env["PWD"] = gone.string();
    ASSERT_EQ(run(m_dir, options).exit_status, 0);
    fs::remove(gone);
    const auto worker_directory =
        fs::read_symlink(fmt::format("/proc/{}/cwd", start_worker("0").pid()));
    const auto waited = gpusched("wait", {"1"});
    EXPECT_EQ(waited.exit_status, 1) << waited.err;
    const auto job = queue_status()["recent"].at(0);
    EXPECT_EQ(job["state"], "failed");
    EXPECT_EQ(job["exit"], 127);
    EXPECT_NE(job["note"].get<std::string>().find(
                  fmt::format("directory {} does not exist on", gone.string())),
              std::string::npos)
        << job;
    EXPECT_TRUE(eventually([&] {
        return worker_err(0).find(fmt::format("directory {} does not exist", gone.string())) !=
               std::string::npos;
    })) << worker_err(0);
    EXPECT_FALSE(fs::exists(worker_directory / "ran-here")) << "ran in the worker's directory";
    EXPECT_FALSE(fs::exists(m_dir / "ran-here"));
}

TEST_P(QueueContext, AnotherUsersJobsAreNotTheirsToCancelOrRetry)
{
    const auto user = second_user();
    if (!user) {
        GTEST_SKIP() << "a second account needs root";
    }
    ASSERT_EQ(run(m_dir, submit("exit 3\n")).exit_status, 0);
    ASSERT_EQ(run(m_dir, submit("true\n")).exit_status, 0);
    if (!on_redis()) {
        // Readable by the other user, as a queue may be: still not theirs to change.
        fs::permissions(m_dir.path(), fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
        fs::permissions(db(), fs::perms::owner_read | fs::perms::owner_write |
                                  fs::perms::group_read | fs::perms::others_read);
    }
    const auto listed = run(m_dir, as_user(*user, command("queue")));
    EXPECT_EQ(listed.exit_status, 0) << "a queue others can read can be read: " << listed.err;
    EXPECT_NE(listed.out.find("queued    2"), std::string::npos) << listed.out;
    const auto cancel = run(m_dir, as_user(*user, command("cancel", {"2"})));
    EXPECT_NE(cancel.exit_status, 0) << cancel.err;
    EXPECT_NE(cancel.err.find("root"), std::string::npos) << cancel.err;
    for (const auto& verb : {"pause", "resume"}) {
        const auto changed = run(m_dir, as_user(*user, command(verb)));
        if (!on_redis()) {
            EXPECT_EQ(changed.exit_status, 255) << verb << ": " << changed.err;
            EXPECT_NE(changed.err.find("is root's"), std::string::npos) << changed.err;
        }
    }
    const auto status = queue_status();
    EXPECT_EQ(status["queued"], 2) << "another user's cancel removed a job";
    EXPECT_TRUE(status["paused"].empty()) << status;
    // Root may change any.
    EXPECT_EQ(gpusched("cancel", {"2"}).exit_status, 0);
}

TEST_P(QueueContext, PauseOfAnEmptyGpuNameIsBadInputAndChangesNothing)
{
    const auto paused = gpusched("pause", {"--gpu", ""});
    EXPECT_EQ(paused.exit_status, 255) << paused.err;
    EXPECT_NE(paused.err.find("--gpu"), std::string::npos) << paused.err;
    EXPECT_TRUE(queue_status()["paused"].empty());
}

// A --front submission keeps its own order ahead of the queued jobs, however many chunks it is
// written in (10,000 commands a transaction on SQLite, 500 a round trip on Redis).
TEST_P(QueueContext, AFrontSubmissionOfManyChunksKeepsItsOrder)
{
    ASSERT_EQ(run(m_dir, submit("echo queued-before\n")).exit_status, 0);
    const int count = on_redis() ? 505 : 10'005;
    std::string commands;
    for (int i = 1; i <= count; ++i) {
        commands += fmt::format("echo {}\n", i);
    }
    ASSERT_EQ(run(m_dir, submit(commands, {"--front"})).exit_status, 0);
    const auto next = queue_status()["next"];
    ASSERT_GE(next.size(), 3u);
    EXPECT_EQ(next[0]["command"], "echo 1");
    EXPECT_EQ(next[1]["command"], "echo 2");
    EXPECT_EQ(next[2]["command"], "echo 3");
}

// A GPU paused before a worker starts gets none of its jobs, not even the first.
TEST_P(QueueContext, AGpuPausedBeforeAWorkerStartsGetsNoJob)
{
    ASSERT_EQ(gpusched("pause", {"--gpu", "0"}).exit_status, 0);
    ASSERT_EQ(run(m_dir, submit(logging_commands(1))).exit_status, 0);
    start_worker("0,1");
    const auto waited = gpusched("wait", {"1"});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    const auto job = queue_status()["recent"].at(0);
    EXPECT_EQ(job["gpu"], "1") << job;
}

INSTANTIATE_TEST_SUITE_P(Stores, QueueContext, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

// A local queue's database, or its directory, that another user can write is refused by
// submit and worker: its rows could be anyone's commands, run as the worker's owner.
class SharedDatabase : public ::testing::Test, public QueueFixture {
protected:
    SharedDatabase() : QueueFixture(Store::sqlite) {}
};

TEST_F(SharedDatabase, ADatabaseOthersCanWriteIsRefusedBySubmitAndWorker)
{
    ASSERT_EQ(run(m_dir, submit("touch " + (m_dir / "ran").string() + "\n")).exit_status, 0);
    for (const auto mode : {0666, 0664}) {
        chmod(db().c_str(), static_cast<mode_t>(mode));
        const auto submitted = run(m_dir, submit("true\n"));
        EXPECT_EQ(submitted.exit_status, 255) << submitted.err;
        EXPECT_NE(submitted.err.find(db()), std::string::npos) << submitted.err;
        EXPECT_NE(
            submitted.err.find(mode == 0666 ? "writable by every user" : "writable by its group"),
            std::string::npos)
            << submitted.err;
        const auto worker = run(m_dir, command("worker", {"--gpus", "0"}));
        EXPECT_EQ(worker.exit_status, 255) << worker.err;
        EXPECT_NE(worker.err.find("cannot be trusted"), std::string::npos) << worker.err;
        // Reading it stays possible.
        EXPECT_EQ(queue_status()["queued"], 1);
    }
    chmod(db().c_str(), 0600);
    chmod(m_dir.path().c_str(), 0777);
    const auto in_open_directory = run(m_dir, submit("true\n"));
    EXPECT_EQ(in_open_directory.exit_status, 255) << in_open_directory.err;
    EXPECT_NE(in_open_directory.err.find("its directory " + m_dir.path().string()),
              std::string::npos)
        << in_open_directory.err;
    chmod(m_dir.path().c_str(), 0700);
    EXPECT_FALSE(fs::exists(m_dir / "ran"));
    EXPECT_EQ(queue_status()["queued"], 1);
}

} // namespace
} // namespace gpusched::testing
