// Where, with what and as whom a queued job runs: in its submitter's directory, environment
// and umask, whichever worker takes it and wherever that worker was started; and whose jobs a
// worker runs and a user may change. Each test runs on both stores.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <memory>
#include <thread>

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

    // GPU 0's host-wide lease held by an `exec` of another process (returned: SIGTERM frees
    // it), a worker on GPU 0 under the same leases, and job 1 (`touch RAN`) submitted, which
    // the worker could not start and gave back to the queue.
    std::unique_ptr<Process> a_job_gone_back_from_a_leased_gpu(const fs::path& ran)
    {
        const auto leases = (m_dir / "leases").string();
        const auto held = m_dir / "held";
        auto holder = std::make_unique<Process>(
            m_dir, LaunchOptions{{"exec", "--gpus", "0", "--", "sh", "-c",
                                  fmt::format("touch {}; exec sleep 60", held.string())},
                                 std::nullopt,
                                 {},
                                 {{"GPUSCHED_LOCK_DIR", leases}}});
        EXPECT_TRUE(eventually([&] { return fs::exists(held); }));
        start_worker("0", {}, {{"GPUSCHED_LOCK_DIR", leases}});
        EXPECT_EQ(run(m_dir, submit("touch " + ran.string() + "\n")).exit_status, 0);
        EXPECT_TRUE(eventually([&] {
            return worker_err(0).find("job 1 goes back to the queue") != std::string::npos;
        })) << worker_err(0);
        return holder;
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
               // On Redis the environment travels only as named (whoever can read the
               // server reads it); a local queue keeps all of it.
               on_redis() ? std::vector<std::string>{"--wait", "--env", "PATH", "--env",
                                                     "VIRTUAL_ENV", "--env", "HF_HOME"}
                          : std::vector<std::string>{"--wait"});
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

// A job's niceness is part of what it asks of its worker: `submit --nice` over the worker's
// own --nice, which a job that asks none gets.
TEST_P(QueueContext, AJobRunsAtTheNicenessItAskedForElseItsWorkers)
{
    errno = 0;
    const int own = getpriority(PRIO_PROCESS, 0);
    ASSERT_EQ(errno, 0);
    start_worker("0", {"--nice", "3"});
    const auto asked = (m_dir / "asked").string();
    const auto plain = (m_dir / "plain").string();
    auto submitted = run(m_dir, submit("nice > " + asked + "\n", {"--wait", "--nice", "5"}));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    submitted = run(m_dir, submit("nice > " + plain + "\n", {"--wait"}));
    ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    EXPECT_EQ(read_file(asked), fmt::format("{}\n", std::min(own + 5, 19)));
    EXPECT_EQ(read_file(plain), fmt::format("{}\n", std::min(own + 3, 19)));
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
    EXPECT_EQ(job["exit_code"], 127);
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
    for (const auto* blank : {"", " ", "0 1", "\t"}) {
        const auto paused = gpusched("pause", {"--gpu", blank});
        EXPECT_EQ(paused.exit_status, 255) << "'" << blank << "': " << paused.err;
        EXPECT_NE(paused.err.find("--gpu"), std::string::npos) << paused.err;
    }
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
    EXPECT_EQ(job["gpus"], nlohmann::json::array({"1"})) << job;
}

// A job a worker cannot start (its one GPU's host-wide lease is another process's) goes back
// to the queue at once, where a cancel still reaches it; it never waits in the worker for the
// lease, and the worker takes nothing more until the GPU is free.
TEST_P(QueueContext, AJobWhoseGpuIsLeasedElsewhereGoesBackAndCanBeCancelled)
{
    const auto holder = a_job_gone_back_from_a_leased_gpu(m_dir / "ran");
    ASSERT_FALSE(::testing::Test::HasFailure());
    EXPECT_EQ(queue_status()["queued"], 1);
    const auto cancelled = gpusched("cancel", {"1"});
    EXPECT_EQ(cancelled.exit_status, 0) << cancelled.err;
    EXPECT_NE(cancelled.out.find("removed from the queue"), std::string::npos) << cancelled.out;
    holder->signal(SIGTERM);
    holder->wait();
    ASSERT_EQ(run(m_dir, submit(logging_commands(1), {"--wait"})).exit_status, 0)
        << "the GPU, free again, runs the next job";
    EXPECT_FALSE(fs::exists(m_dir / "ran")) << "a cancelled job ran";
    EXPECT_EQ(queue_status()["cancelled"], 1);
}

// A pause of a GPU that lands while a worker's job has just gone back (its GPU leased
// elsewhere), and before the worker looks again: the lease frees, the worker takes the job
// again with the pause, and holds it; it runs only once the GPU is resumed.
TEST_P(QueueContext, AGpuPausedWhileItsLeaseIsHeldElsewhereStartsNothingWhenItFrees)
{
    const auto ran = m_dir / "ran";
    const auto holder = a_job_gone_back_from_a_leased_gpu(ran);
    ASSERT_FALSE(::testing::Test::HasFailure());
    ASSERT_EQ(gpusched("pause", {"--gpu", "0"}).exit_status, 0);
    holder->signal(SIGTERM);
    holder->wait();
    // The runner has the pause, and the lease is free for it.
    ASSERT_TRUE(eventually([&] {
        return worker_err(0).find("GPU 0 paused: no new job starts there") != std::string::npos;
    })) << worker_err(0);
    std::this_thread::sleep_for(1500ms); // a look or two of the worker's, and what follows
    EXPECT_FALSE(fs::exists(ran)) << "a job started on a paused GPU\n" << worker_err(0);
    const auto listing = queue_status();
    const auto* job = listed_job(listing, 1);
    ASSERT_NE(job, nullptr) << listing;
    EXPECT_EQ(job->at("state"), "queued") << listing;
    ASSERT_EQ(gpusched("resume", {"--gpu", "0"}).exit_status, 0);
    const auto waited = gpusched("wait", {"1"});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_TRUE(fs::exists(ran)) << "resumed, the GPU runs it";
}

// A worker SIGKILLed (the OOM killer's way) while a submit waits for its job: the submit
// notices, returns the job to the queue, says no worker serves it, and follows it to its end
// once one does.
TEST_P(QueueContext, ASubmitThatWaitsNoticesItsWorkerKilledAndSaysNoneServes)
{
    const std::vector<std::string> lease = {"--lease-timeout", "1"};
    auto& doomed = start_worker("0", on_redis() ? lease : std::vector<std::string>{});
    const auto pid_file = m_dir / "pid";
    const auto first_run = m_dir / "first-run";
    Process submitter(
        m_dir, submit(fmt::format("if [ -e {1} ]; then exit 0; fi; touch {1}; echo $$ > {0}; "
                                  "exec sleep 60\n",
                                  pid_file.string(), first_run.string()),
                      {"--wait"}));
    ASSERT_TRUE(eventually([&] { return !read_file(pid_file).empty(); }));
    doomed.signal(SIGKILL);
    doomed.wait();
    // Its job would run on as an orphan; kill it too, as the OOM killer may.
    kill(std::stoi(read_file(pid_file)), SIGKILL);
    EXPECT_TRUE(eventually([&] {
        const auto said = submitter.err_so_far();
        return said.find("went back to queue") != std::string::npos &&
               said.find("no worker serves queue") != std::string::npos;
    })) << submitter.err_so_far();
    start_worker("1", on_redis() ? lease : std::vector<std::string>{});
    const auto result = submitter.wait(60s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

// `logs --follow` of a job whose worker was killed and that another worker runs again shows
// the new run from its first byte, not the new run's tail joined to the old run's head.
TEST_P(QueueContext, LogsFollowShowsARerunFromItsStart)
{
    const std::vector<std::string> lease = {"--lease-timeout", "1"};
    auto& doomed = start_worker("0", on_redis() ? lease : std::vector<std::string>{});
    const auto pid_file = m_dir / "pid";
    const auto first_run = m_dir / "first-run";
    ASSERT_EQ(run(m_dir, submit(fmt::format("if [ -e {1} ]; then echo second-a; echo second-b; "
                                            "exit 0; fi; touch {1}; echo "
                                            "a-first-run-line-longer-than-the-second-runs; echo "
                                            "$$ > {0}; exec sleep 60\n",
                                            pid_file.string(), first_run.string())))
                  .exit_status,
              0);
    TempDir follower_dir;
    Process follower(follower_dir, command("logs", {"--follow", "1"}));
    ASSERT_TRUE(eventually([&] { return !read_file(pid_file).empty(); }));
    if (!on_redis()) {
        // A Redis queue shows a job's output once it ended; a local one as it is written.
        ASSERT_TRUE(eventually([&] {
            return read_file(follower_dir / "gpusched.out").find("first-run") != std::string::npos;
        }));
    }
    doomed.signal(SIGKILL);
    doomed.wait();
    kill(std::stoi(read_file(pid_file)), SIGKILL);
    start_worker("1", on_redis() ? lease : std::vector<std::string>{});
    const auto followed = follower.wait(60s);
    EXPECT_EQ(followed.exit_status, 0) << followed.err;
    EXPECT_NE(followed.out.find("second-a\nsecond-b\n"), std::string::npos) << followed.out;
    if (!on_redis()) {
        EXPECT_NE(followed.err.find("job 1 started again"), std::string::npos) << followed.err;
    }
}

// A job whose worker was lost in its second attempt, and that another worker then runs whole
// at the first, shows that run's output: no attempt of the lost run is left to be taken for it.
TEST_P(QueueContext, AJobRunAgainShowsNoneOfTheLostRunsAttempts)
{
    const std::vector<std::string> lease = {"--lease-timeout", "1"};
    auto& doomed = start_worker("0", on_redis() ? lease : std::vector<std::string>{});
    const auto pid_file = m_dir / "pid";
    const auto tried = m_dir / "tried";
    const auto lost = m_dir / "lost";
    ASSERT_EQ(run(m_dir, submit(fmt::format("if [ -e {2} ]; then echo the-run-again; exit 0; fi; "
                                            "if [ -e {1} ]; then touch {2}; echo $$ > {0}; exec "
                                            "sleep 60; fi; touch {1}; exit 1\n",
                                            pid_file.string(), tried.string(), lost.string()),
                                {"--retries", "1"}))
                  .exit_status,
              0);
    ASSERT_TRUE(eventually([&] { return !read_file(pid_file).empty(); }));
    doomed.signal(SIGKILL);
    doomed.wait();
    kill(std::stoi(read_file(pid_file)), SIGKILL);
    start_worker("1", on_redis() ? lease : std::vector<std::string>{});
    ASSERT_EQ(run(m_dir, command("wait", {"1", "--timeout", "60"})).exit_status, 0);
    const auto shown = run(m_dir, command("logs", {"1"}));
    EXPECT_EQ(shown.out, "the-run-again\n") << shown.err;
}

// `logs --follow` started while the job is queued shows its output once, and says nothing of a
// run that did not happen again.
TEST_P(QueueContext, LogsFollowShowsARunOnce)
{
    ASSERT_EQ(run(m_dir, submit("echo hello; sleep 0.5\n")).exit_status, 0);
    TempDir follower_dir;
    Process follower(follower_dir, command("logs", {"--follow", "1"}));
    ASSERT_TRUE(eventually([&] { return follower.err_so_far().find("queued") != std::string::npos; }));
    start_worker("0");
    const auto followed = follower.wait(60s);
    EXPECT_EQ(followed.exit_status, 0) << followed.err;
    EXPECT_EQ(followed.out, "hello\n");
    EXPECT_EQ(followed.err.find("started again"), std::string::npos) << followed.err;
}

// A submitter whose environment names GPUs (GPUSCHED_GPUS, ranges and all, else
// CUDA_VISIBLE_DEVICES) that no worker of the queue runs on is told where its jobs run.
TEST_P(QueueContext, ASubmitNamingOtherGpusThanTheWorkersSaysWhereItsJobsRun)
{
    start_worker("0,1");
    ASSERT_TRUE(eventually([&] { return served_only_on("0,1"); }));
    for (const char* variable : {"GPUSCHED_GPUS", "CUDA_VISIBLE_DEVICES"}) {
        auto elsewhere = submit("true\n");
        elsewhere.env[variable] = variable == std::string("GPUSCHED_GPUS") ? "2-3" : "2,3";
        const auto other = run(m_dir, elsewhere);
        EXPECT_EQ(other.exit_status, 0) << other.err;
        EXPECT_NE(other.err.find("GPUs 2,3 named here, but queue default is served on GPUs 0,1"),
                  std::string::npos)
            << variable << ": " << other.err;
    }
    auto same = submit("true\n");
    same.env["GPUSCHED_GPUS"] = "0-1";
    same.env["CUDA_VISIBLE_DEVICES"] = "5";
    EXPECT_EQ(run(m_dir, same).err.find("named here"), std::string::npos)
        << "GPUSCHED_GPUS is what a worker would read first";
    for (const char* some_of_them : {"0,1", "1", "1,0"}) {
        auto part = submit("true\n");
        part.env["CUDA_VISIBLE_DEVICES"] = some_of_them;
        EXPECT_EQ(run(m_dir, part).err.find("named here"), std::string::npos) << some_of_them;
    }
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
    const group* shared = getgrnam("users");
    ASSERT_NE(shared, nullptr);
    for (const auto mode : {0666, 0664}) {
        chmod(db().c_str(), static_cast<mode_t>(mode));
        ASSERT_EQ(chown(db().c_str(), static_cast<uid_t>(-1), shared->gr_gid), 0);
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
    // Even in the owner's own group: who else is in it (as their primary group, or by an ACL,
    // whose mask the group bits show) cannot be told.
    chmod(db().c_str(), 0664);
    ASSERT_EQ(chown(db().c_str(), static_cast<uid_t>(-1), getegid()), 0);
    EXPECT_EQ(run(m_dir, submit("true\n")).exit_status, 255);
    chmod(db().c_str(), 0600);
    chmod(m_dir.path().c_str(), 0777);
    const auto in_open_directory = run(m_dir, submit("true\n"));
    EXPECT_EQ(in_open_directory.exit_status, 255) << in_open_directory.err;
    EXPECT_NE(in_open_directory.err.find("its directory " + m_dir.path().string()),
              std::string::npos)
        << in_open_directory.err;
    chmod(m_dir.path().c_str(), 0700);
    EXPECT_FALSE(fs::exists(m_dir / "ran"));
    EXPECT_GE(queue_status()["queued"], 1);
}

// A submit from inside a job (its one GPU in CUDA_VISIBLE_DEVICES) starts no worker on that
// GPU alone, and says so. (Where a submit naming other GPUs than the workers' says its jobs
// run: QueueContext.ASubmitNamingOtherGpusThanTheWorkersSaysWhereItsJobsRun, both stores.)
TEST_F(SharedDatabase, ASubmitFromInsideAJobStartsNoWorkerOnItsGpu)
{
    auto from_a_job = command("submit", {}, "true\n");
    from_a_job.env["GPUSCHED_JOB_ID"] = "7";
    from_a_job.env["GPUSCHED_GPU"] = "3";
    from_a_job.env["CUDA_VISIBLE_DEVICES"] = "3";
    const auto inside = run(m_dir, from_a_job);
    EXPECT_EQ(inside.exit_status, 0) << inside.err;
    EXPECT_NE(inside.err.find("none is started from inside job 7"), std::string::npos)
        << inside.err;
    EXPECT_TRUE(queue_status()["workers"].empty());
}

// Where a job's output files go when a worker has no state directory ($HOME unset): a name in
// the temporary directory that another user could take first and plant links in. A worker
// refuses a directory there that is not its own, rather than write its jobs' output through
// the other user's links.
class OutputPlaces : public ::testing::Test, public QueueFixture {
protected:
    OutputPlaces() : QueueFixture(Store::redis) {}
};

TEST_F(OutputPlaces, AWorkerRefusesAnOutputDirectoryAnotherUserMadeFirst)
{
    const auto user = second_user();
    if (!user) {
        GTEST_SKIP() << "a second account needs root";
    }
    TempDir temporary;
    fs::permissions(temporary.path(), fs::perms::all | fs::perms::sticky_bit);
    const auto taken = temporary / fmt::format("gpusched-output-{}", geteuid());
    ASSERT_EQ(
        std::system(fmt::format("runuser -u {} -- mkdir -m 777 {}", *user, taken.string()).c_str()),
        0);
    auto& worker = start_worker("0", {},
                                {{"HOME", std::nullopt},
                                 {"XDG_STATE_HOME", std::nullopt},
                                 {"TMPDIR", temporary.path().string()}});
    const auto ended = worker.wait(30s);
    EXPECT_EQ(ended.exit_status, 255) << ended.err;
    EXPECT_NE(ended.err.find(taken.string() + " belongs to another user"), std::string::npos)
        << ended.err;
}

// A worker's own output directory that a umask of 002 left group-writable (as earlier
// versions made it) is closed to others, not refused.
TEST_F(SharedDatabase, AnOutputDirectoryOfOursLeftGroupWritableIsClosed)
{
    const auto output = fs::path(db() + "-output") / "default";
    fs::create_directories(output);
    fs::permissions(fs::path(db() + "-output"), static_cast<fs::perms>(0775));
    fs::permissions(output, static_cast<fs::perms>(0775));
    start_worker("0");
    ASSERT_EQ(run(m_dir, submit("echo hi\n", {"--wait"})).exit_status, 0);
    EXPECT_EQ(fs::status(output).permissions() & fs::perms::group_write, fs::perms::none);
    EXPECT_EQ(read_file(output / "1.out"), "hi\n");
}

// A job's output file is never opened through a link: one planted where it goes (in an
// --output-dir another user could write) makes the job fail to start, and the link's target
// is untouched.
TEST_F(OutputPlaces, AJobsOutputIsNeverWrittenThroughALink)
{
    const auto output = m_dir / "output";
    fs::create_directories(output);
    write_file(m_dir / "victim", "precious\n");
    fs::create_symlink(m_dir / "victim", output / "1.out");
    const auto result =
        run(m_dir, {{"--gpus", "0", "--output-dir", output.string()}, "echo overwritten\n"});
    EXPECT_NE(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(m_dir / "victim"), "precious\n");
}

} // namespace
} // namespace gpusched::testing
