// The queue commands (cancel, pause, resume, retry, logs, wait, submit --priority/--front,
// queue --purge) against real workers, on each backend: a local queue (an SQLite database)
// and a Redis queue (a real redis-server started by the test). The same test runs on both:
// the commands do not know which backend they talk to, and neither do these tests.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// A worker's jobs get SIGKILL 5 s after a cancel's SIGTERM.
const std::vector<std::string> k_kill_soon = {"--kill-after", "5s"};

class QueueVerbs : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    QueueVerbs() : QueueFixture(GetParam()) {}

    // Submits `commands` (no worker is started for them); their ids, as the submission says
    // them: a running worker may have taken, run and ended them before any listing.
    std::vector<std::int64_t> submit_jobs(const std::string& commands,
                                          std::vector<std::string> extra = {})
    {
        extra.push_back("--json");
        const auto result = run(m_dir, submit(commands, std::move(extra)));
        EXPECT_EQ(result.exit_status, 0) << result.err;
        std::vector<std::int64_t> ids;
        if (result.exit_status == 0) {
            for (const auto& id : json_field(result.out, "ids")) {
                ids.push_back(id.get<std::int64_t>());
            }
        }
        return ids;
    }

    nlohmann::json listing() const
    {
        const auto result = gpusched("queue", {"--json", "--next", "1000", "--failures", "1000"});
        EXPECT_EQ(result.exit_status, 0) << result.err;
        return nlohmann::json::parse(result.out);
    }

    std::set<std::int64_t> listed_ids() const
    {
        std::set<std::int64_t> ids;
        const auto json = listing();
        for (const char* part : {"next", "waiting_jobs", "running", "recent"}) {
            for (const auto& job : json[part]) {
                ids.insert(job["id"].get<std::int64_t>());
            }
        }
        return ids;
    }

    // The state of job `id` as the listing shows it ("" when it is not listed).
    std::string state_of(std::int64_t id) const
    {
        const auto json = listing();
        const auto* job = listed_job(json, id);
        return job != nullptr ? job->at("state").get<std::string>() : "";
    }

    std::vector<std::string> log_lines() const { return split_lines(read_file(m_dir / "log")); }
};

TEST_P(QueueVerbs, CancelRemovesAQueuedJob)
{
    const auto ids = submit_jobs(fmt::format("echo 1 >> {0}\necho 2 >> {0}\necho 3 >> {0}\n", log()));
    ASSERT_EQ(ids.size(), 3u);
    const auto cancelled = gpusched("cancel", {std::to_string(ids[1])});
    EXPECT_EQ(cancelled.exit_status, 0) << cancelled.err;
    EXPECT_NE(cancelled.out.find("removed from the queue"), std::string::npos) << cancelled.out;
    EXPECT_EQ(state_of(ids[1]), "cancelled");
    EXPECT_EQ(listing()["queued"], 2);
    start_worker("0", k_kill_soon);
    const auto waited = gpusched("wait", {std::to_string(ids[0]), std::to_string(ids[2])});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(log_lines(), (std::vector<std::string>{"1", "3"}));
}

TEST_P(QueueVerbs, CancelStopsARunningJobWhichIsRecordedCancelledAndNeverRunAgain)
{
    start_worker("0", k_kill_soon);
    const auto ids = submit_jobs(fmt::format(
        "trap 'echo term >> {0}; exit 1' TERM; echo start >> {0}; sleep 30 & wait\n", log()));
    ASSERT_EQ(ids.size(), 1u);
    ASSERT_TRUE(eventually([&] { return log_lines().size() == 1; }));
    const auto cancelled = gpusched("cancel", {std::to_string(ids[0])});
    EXPECT_EQ(cancelled.exit_status, 0) << cancelled.err;
    EXPECT_NE(cancelled.out.find("its worker stops it"), std::string::npos) << cancelled.out;
    // `wait` exits as a run would: a cancelled job did not succeed.
    const auto waited = gpusched("wait", {std::to_string(ids[0])});
    EXPECT_EQ(waited.exit_status, 1) << waited.err;
    EXPECT_NE(waited.err.find("cancelled"), std::string::npos) << waited.err;
    EXPECT_EQ(state_of(ids[0]), "cancelled");
    EXPECT_EQ(log_lines(), (std::vector<std::string>{"start", "term"}));
    // The worker goes on with the next job; the cancelled one is not run again.
    const auto next = submit_jobs(fmt::format("echo next >> {}\n", log()));
    EXPECT_EQ(gpusched("wait", {std::to_string(next.at(0))}).exit_status, 0);
    EXPECT_EQ(log_lines(), (std::vector<std::string>{"start", "term", "next"}));
}

// Each end in one phrase, as `queue` lists it and the worker counts it: a job skipped for the
// failure it waited for, one cancelled in the queue, one cancelled while it ran (cancelled in
// the worker's summary too, not failed, and not named among the failed jobs).
TEST_P(QueueVerbs, EachEndIsOnePhraseAndTheWorkerCountsACancelAsTheQueueDoes)
{
    const auto failing = submit_jobs("exit 3\n");
    const auto failed = std::to_string(failing.at(0));
    const auto skipped = submit_jobs("true\n", {"--after-ok", failed});
    const auto removed = submit_jobs("true\n");
    EXPECT_EQ(gpusched("cancel", {std::to_string(removed.at(0))}).exit_status, 0);
    auto& worker = start_worker("0", k_kill_soon);
    EXPECT_EQ(gpusched("wait", {failed}).exit_status, 1);
    const auto stopped = submit_jobs(fmt::format("echo start >> {}; sleep 30\n", log()));
    ASSERT_TRUE(eventually([&] { return log_lines().size() == 1; }));
    EXPECT_EQ(gpusched("cancel", {std::to_string(stopped.at(0))}).exit_status, 0);
    EXPECT_EQ(gpusched("wait", {std::to_string(stopped[0])}).exit_status, 1);

    const auto shown = gpusched("queue");
    EXPECT_EQ(shown.exit_status, 0) << shown.err;
    for (const auto& line :
         {fmt::format("  job {} skipped: job {} failed: true\n", skipped.at(0), failed),
          fmt::format("  job {} cancelled before it started: true\n", removed[0]),
          fmt::format("  job {} cancelled while running: echo start", stopped[0])}) {
        EXPECT_NE(shown.out.find(line), std::string::npos) << line << "in\n" << shown.out;
    }
    EXPECT_FALSE(std::regex_search(shown.out, std::regex(R"(\n  job \d+ (cancelled|skipped), )")))
        << shown.out;

    EXPECT_EQ(gpusched("worker", {"--stop"}).exit_status, 0);
    const auto ended = worker.wait(30s);
    EXPECT_EQ(ended.exit_status, 1) << "the one failure, not the cancel: " << ended.err;
    EXPECT_NE(ended.err.find(
                  fmt::format("job {} cancelled on GPU 0: killed by SIGTERM after ", stopped[0])),
              std::string::npos)
        << ended.err;
    EXPECT_NE(ended.err.find("] 2 jobs: 0 succeeded, 1 failed, 1 cancelled, in "),
              std::string::npos)
        << ended.err;
    EXPECT_EQ(ended.err.find(fmt::format("failed job {}", stopped[0])), std::string::npos)
        << ended.err;
}

// `wait` for a job no worker serves says so once, after a grace period, and keeps waiting;
// --timeout gives up with timeout(1)'s status, leaving the job queued.
TEST_P(QueueVerbs, WaitSaysOnceThatNoWorkerServesAndGivesUpAtItsTimeout)
{
    const auto ids = submit_jobs("true\n");
    ASSERT_EQ(ids.size(), 1u);
    const auto waited = gpusched("wait", {std::to_string(ids[0]), "--timeout", "4s"});
    EXPECT_EQ(waited.exit_status, 124) << waited.err;
    EXPECT_EQ(count_lines_with(waited.err, "no worker serves"), 1u) << waited.err;
    EXPECT_NE(waited.err.find(fmt::format("job {} is queued, and no worker serves", ids[0])),
              std::string::npos)
        << waited.err;
    EXPECT_NE(waited.err.find("gave up after 4"), std::string::npos) << waited.err;
    EXPECT_EQ(state_of(ids[0]), "queued");
    // Served, the same wait says nothing of workers and ends as the job does.
    start_worker("0");
    const auto served = gpusched("wait", {std::to_string(ids[0]), "--timeout", "60s"});
    EXPECT_EQ(served.exit_status, 0) << served.err;
    EXPECT_EQ(served.err.find("no worker serves"), std::string::npos) << served.err;
}

TEST_P(QueueVerbs, CancellingAnEndedOrUnknownJobSaysSoAndCountsIt)
{
    start_worker("0", k_kill_soon);
    const auto ids = submit_jobs("true\n");
    EXPECT_EQ(gpusched("wait", {std::to_string(ids.at(0))}).exit_status, 0);
    const auto result = gpusched("cancel", {std::to_string(ids[0]), "999999"});
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("already ended (succeeded)"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("no job 999999"), std::string::npos) << result.err;
    const auto bad = gpusched("cancel", {"1abc"});
    EXPECT_EQ(bad.exit_status, 255);
    EXPECT_NE(bad.err.find("'1abc' is not a job id"), std::string::npos) << bad.err;
}

TEST_P(QueueVerbs, PauseStartsNothingNewUntilResume)
{
    ASSERT_EQ(gpusched("pause").exit_status, 0);
    EXPECT_EQ(listing()["paused"], nlohmann::json::array({""}));
    start_worker("0", {"--kill-after", "5s", "--verbose"});
    const auto looks = [&] { return count_lines_with(worker_err(0), "looked at while paused"); };
    const auto ids = submit_jobs(fmt::format("echo 1 >> {0}\necho 2 >> {0}\n", log()));
    // Three looks at the queue since the jobs came: the second begun after they were there,
    // and the take that would have followed it made before the third.
    const auto before = looks();
    ASSERT_TRUE(eventually([&] { return looks() >= before + 3; })) << worker_err(0);
    EXPECT_TRUE(log_lines().empty());
    EXPECT_EQ(listing()["queued"], 2);
    ASSERT_EQ(gpusched("resume").exit_status, 0);
    const auto waited = gpusched("wait");
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(log_lines(), (std::vector<std::string>{"1", "2"}));
}

TEST_P(QueueVerbs, APausedGpuGetsNoNewJobWhileTheOthersGoOn)
{
    start_worker("0,1", k_kill_soon);
    ASSERT_EQ(gpusched("pause", {"--gpu", "0"}).exit_status, 0);
    // The pause reaches the worker before the jobs do: it says so when it does.
    ASSERT_TRUE(eventually([&] {
        return worker_err(0).find("GPU 0 paused: no new job starts there") != std::string::npos;
    })) << worker_err(0);
    std::string commands;
    for (int i = 0; i < 6; ++i) {
        commands += fmt::format("echo $CUDA_VISIBLE_DEVICES >> {}\n", log());
    }
    submit_jobs(commands);
    const auto waited = gpusched("wait");
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(log_lines(), std::vector<std::string>(6, "1"));
    ASSERT_EQ(gpusched("resume", {"--gpu", "0"}).exit_status, 0);
    EXPECT_TRUE(listing()["paused"].empty());
}

TEST_P(QueueVerbs, PriorityAndFrontDecideTheOrder)
{
    submit_jobs(fmt::format("echo a >> {0}\necho b >> {0}\n", log()));
    submit_jobs(fmt::format("echo c >> {0}\necho d >> {0}\n", log()), {"--front"});
    submit_jobs(fmt::format("echo e >> {0}\n", log()), {"--priority", "5"});
    submit_jobs(fmt::format("echo z >> {0}\n", log()), {"--priority=-1"});
    std::vector<std::string> listed;
    const auto json = listing();
    for (const auto& job : json["next"]) {
        listed.push_back(job["command"].get<std::string>().substr(5, 1));
    }
    EXPECT_EQ(listed, (std::vector<std::string>{"e", "c", "d", "a", "b", "z"}));
    start_worker("0", k_kill_soon);
    EXPECT_EQ(gpusched("wait").exit_status, 0);
    EXPECT_EQ(log_lines(), listed);
}

TEST_P(QueueVerbs, RetryQueuesAFailedJobAgain)
{
    start_worker("0", k_kill_soon);
    const auto flag = (m_dir / "flag").string();
    const auto ids = submit_jobs(
        fmt::format("if [ -e {0} ]; then echo second >> {1}; else touch {0}; exit 3; fi\n", flag,
                    log()));
    EXPECT_EQ(gpusched("wait", {std::to_string(ids.at(0))}).exit_status, 1);
    EXPECT_EQ(state_of(ids[0]), "failed");
    const auto retried = gpusched("retry", {std::to_string(ids[0])});
    EXPECT_EQ(retried.exit_status, 0) << retried.err;
    EXPECT_EQ(gpusched("wait", {std::to_string(ids[0])}).exit_status, 0);
    EXPECT_EQ(state_of(ids[0]), "succeeded");
    EXPECT_EQ(log_lines(), std::vector<std::string>{"second"});
    const auto again = gpusched("retry", {std::to_string(ids[0])});
    EXPECT_EQ(again.exit_status, 1);
    EXPECT_NE(again.err.find("not queued again"), std::string::npos) << again.err;
}

TEST_P(QueueVerbs, LogsShowAJobsStdoutAndStderrApart)
{
    start_worker("0", k_kill_soon);
    const auto ids = submit_jobs("echo to-out; echo to-err >&2; exit 4\n");
    EXPECT_EQ(gpusched("wait", {std::to_string(ids.at(0))}).exit_status, 1);
    const auto logs = gpusched("logs", {std::to_string(ids[0])});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(logs.out, "to-out\n");
    EXPECT_NE(logs.err.find("to-err\n"), std::string::npos) << logs.err;
}

TEST_P(QueueVerbs, LogsFollowWaitsForTheStartAndShowsEverythingToTheEnd)
{
    const auto ids = submit_jobs("echo one; sleep 1; echo two\n");
    TempDir dir;
    Process follower(dir, command("logs", {"--follow", std::to_string(ids.at(0))}));
    start_worker("0", k_kill_soon);
    const auto followed = follower.wait(30s);
    EXPECT_FALSE(followed.timed_out);
    EXPECT_EQ(followed.exit_status, 0) << followed.err;
    EXPECT_EQ(followed.out, "one\ntwo\n");
}

TEST_P(QueueVerbs, WaitWithoutIdsWaitsForEveryUnendedJobAndCountsFailures)
{
    ASSERT_EQ(gpusched("pause").exit_status, 0);
    start_worker("0,1", k_kill_soon);
    submit_jobs("true\nexit 3\nsleep 1\nsh -c 'kill -9 $$'\n");
    TempDir dir;
    Process waiting(dir, command("wait"));
    ASSERT_TRUE(eventually([&] { return waiting.err_so_far().find("waiting for 4 jobs") !=
                                        std::string::npos; }));
    ASSERT_EQ(gpusched("resume").exit_status, 0);
    const auto waited = waiting.wait(30s);
    EXPECT_EQ(waited.exit_status, 2) << waited.err;
    EXPECT_NE(waited.err.find("4 jobs: 2 succeeded, 2 failed"), std::string::npos) << waited.err;
}

TEST_P(QueueVerbs, PurgeRemovesEndedJobsButNotQueuedOnes)
{
    start_worker("0", k_kill_soon);
    const auto ended = submit_jobs("echo gone\n");
    EXPECT_EQ(gpusched("wait").exit_status, 0);
    ASSERT_EQ(gpusched("pause").exit_status, 0);
    const auto queued = submit_jobs("true\n");
    const auto purged = gpusched("queue", {"--purge"});
    EXPECT_EQ(purged.exit_status, 0) << purged.err;
    EXPECT_NE(purged.out.find("1 ended job removed"), std::string::npos) << purged.out;
    EXPECT_EQ(state_of(ended.at(0)), "");
    EXPECT_EQ(state_of(queued.at(0)), "queued");
    const auto logs = gpusched("logs", {std::to_string(ended[0])});
    EXPECT_EQ(logs.exit_status, 255);
    EXPECT_NE(logs.err.find(fmt::format("no job {}", ended[0])), std::string::npos) << logs.err;
    const auto recent = gpusched("queue", {"--purge", "--older-than", "1h"});
    EXPECT_NE(recent.out.find("0 ended jobs removed"), std::string::npos) << recent.out;
}

// Submit prints the ids it queued, for a script (`id=$(gpusched submit -- ...)`), and queues
// the words after `--` as one command, each argument as given.
TEST_P(QueueVerbs, SubmitPrintsItsIdsAndQueuesTheCommandAfterDashes)
{
    const auto out = m_dir / "argument";
    auto one = command("submit", {"--no-start", "--", "sh", "-c", "printf '%s' \"$1\" > \"$2\"",
                                  "sh", "it's $HOME; a b", out.string()});
    const auto queued = run(m_dir, one);
    ASSERT_EQ(queued.exit_status, 0) << queued.err;
    EXPECT_EQ(queued.out, "1\n");
    const auto three = run(m_dir, submit("true\ntrue\ntrue\n"));
    EXPECT_EQ(three.out, "2-4\n");
    const auto json = run(m_dir, submit("true\n", {"--json"}));
    ASSERT_EQ(json.exit_status, 0) << json.err;
    const auto parsed = nlohmann::json::parse(json.out);
    EXPECT_EQ(parsed["ids"], nlohmann::json::array({5}));
    start_worker("0");
    const auto waited = gpusched("wait", {"1"});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(read_file(out), "it's $HOME; a b");
    // What submit printed, as the verbs take it.
    const auto all = gpusched("wait", {"2-4,5"});
    EXPECT_EQ(all.exit_status, 0) << all.err;
    EXPECT_NE(all.err.find("4 jobs: 4 succeeded"), std::string::npos) << all.err;
    for (const auto* bad : {"4-2", "3,", "1x", "0-2", "1-"}) {
        EXPECT_EQ(gpusched("wait", {bad}).exit_status, 255) << bad;
    }

    EXPECT_EQ(run(m_dir, command("submit", {"--no-start", "--"})).exit_status, 255);
    const auto both = run(m_dir, command("submit", {"--no-start", "file.txt", "--", "true"}));
    EXPECT_EQ(both.exit_status, 255) << both.err;
    EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
}

// One word after -- is a shell command line, run as written (as pueue takes it); several are
// each passed as given (above).
TEST_P(QueueVerbs, ASingleWordAfterDashesIsAShellCommandLine)
{
    const auto queued =
        run(m_dir, command("submit", {"--no-start", "--", "for i in 1 2 3; do echo \"$i\"; done"}));
    ASSERT_EQ(queued.exit_status, 0) << queued.err;
    start_worker("0");
    EXPECT_EQ(gpusched("wait", {"1"}).exit_status, 0);
    EXPECT_EQ(gpusched("logs", {"1"}).out, "1\n2\n3\n");
}

// Both stores' jobs say the same of their submitter (uid) and of the times they went back to the
// queue unfinished: here, a running job that a stopped worker gave back.
TEST_P(QueueVerbs, AJobSaysWhoSubmittedItAndHowOftenItWentBack)
{
    const auto started = m_dir / "started";
    const auto ids = submit_jobs(fmt::format("touch {}; sleep 30\n", started.string()));
    ASSERT_EQ(ids.size(), 1u);
    auto& worker = start_worker("0", k_kill_soon);
    ASSERT_TRUE(eventually([&] { return fs::exists(started); }));
    worker.signal(SIGTERM);
    ASSERT_FALSE(worker.wait(30s).timed_out);
    const auto listing = queue_status();
    const auto* job = listed_job(listing, ids[0]);
    ASSERT_NE(job, nullptr) << listing;
    EXPECT_EQ((*job)["state"], "queued") << *job;
    EXPECT_EQ((*job)["uid"], static_cast<std::int64_t>(geteuid())) << *job;
    EXPECT_EQ((*job)["returned"], 1) << *job;
}

// `logs` without an id shows the caller's latest job, named on stderr, as ts and pueue do; a
// later job of another user's (on a queue they share) is not ours.
TEST_P(QueueVerbs, LogsWithoutAnIdShowsTheCallersLatestJob)
{
    const auto none = gpusched("logs");
    EXPECT_EQ(none.exit_status, 255) << none.err;
    EXPECT_NE(none.err.find("no job of yours"), std::string::npos) << none.err;
    const auto ids = submit_jobs("echo first\necho second\n");
    ASSERT_EQ(ids.size(), 2u);
    if (const auto user = second_user(); user && on_redis()) {
        ASSERT_EQ(run(m_dir, as_user(*user, submit("echo theirs\n"))).exit_status, 0);
    }
    start_worker("0");
    EXPECT_EQ(gpusched("wait").exit_status, 0);
    const auto latest = gpusched("logs");
    EXPECT_EQ(latest.exit_status, 0) << latest.err;
    EXPECT_EQ(latest.out, "second\n");
    EXPECT_NE(latest.err.find(fmt::format("job {}, your latest", ids[1])), std::string::npos)
        << latest.err;
}

// `gpusched workers` lists each worker with its host, pid, user, GPUs and running jobs.
TEST_P(QueueVerbs, WorkersListsEachWorkerWithItsUserGpusAndRunningJobs)
{
    const auto empty = gpusched("workers");
    EXPECT_EQ(empty.exit_status, 0) << empty.err;
    EXPECT_NE(empty.out.find("no worker"), std::string::npos) << empty.out;
    const auto started = m_dir / "started";
    submit_jobs(fmt::format("touch {}; sleep 30\n", started.string()));
    auto& worker = start_worker("GPU-a0,GPU-a1");
    ASSERT_TRUE(eventually([&] { return fs::exists(started); })) << worker_err(0);
    const auto listed = gpusched("workers", {"--json"});
    ASSERT_EQ(listed.exit_status, 0) << listed.err;
    const auto json = nlohmann::json::parse(listed.out);
    ASSERT_EQ(json["workers"].size(), 1u) << json;
    const auto& entry = json["workers"][0];
    EXPECT_EQ(entry["pid"], worker.pid());
    EXPECT_EQ(entry["user"], "root");
    EXPECT_EQ(entry["gpus"], nlohmann::json::array({"GPU-a0", "GPU-a1"}));
    EXPECT_EQ(entry["running"], 1);
    const auto text = gpusched("workers");
    EXPECT_NE(text.out.find(std::to_string(worker.pid())), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("GPU-a0,GPU-a1"), std::string::npos) << text.out;
}

// `logs --tail N` shows the last N lines of each stream, however long the output.
TEST_P(QueueVerbs, LogsTailShowsTheLastLinesOfEachStream)
{
    const auto ids = submit_jobs("seq 1 200000; seq 1 5 | sed s/^/e/ >&2\n");
    ASSERT_EQ(ids.size(), 1u);
    start_worker("0");
    const auto id = std::to_string(ids[0]);
    ASSERT_EQ(gpusched("wait", {id}).exit_status, 0);
    const auto tail = gpusched("logs", {"--tail", "3", id});
    EXPECT_EQ(tail.exit_status, 0) << tail.err;
    EXPECT_EQ(tail.out, "199998\n199999\n200000\n");
    EXPECT_NE(tail.err.find("e3\ne4\ne5\n"), std::string::npos) << tail.err;
    EXPECT_EQ(tail.err.find("e2\n"), std::string::npos) << "three lines of each stream";
    EXPECT_EQ(gpusched("logs", {"--tail", "0", id}).out, "");
    EXPECT_EQ(gpusched("logs", {"--tail", "-1", id}).exit_status, 255);
}

// A Redis server stopped (SIGSTOP) while the commands talk to it: each gives up after its
// command timeout with an error that says the server did not answer, and none hangs. (The
// local queue's counterpart, a write lock held by a stopped process, is in sqlite_queue_test.cpp.)
TEST_P(QueueVerbs, EveryCommandGivesUpClearlyOnAStoppedServer)
{
    if (!on_redis()) {
        GTEST_SKIP() << "a Redis server's fault";
    }
    const auto ids = submit_jobs("true\n");
    ASSERT_EQ(ids.size(), 1u);
    const auto id = std::to_string(ids[0]);
    redis().pause();
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"queue", {}},        {"cancel", {id}}, {"pause", {}},  {"resume", {}},
        {"retry", {id}},      {"logs", {id}},
        {"wait", {"--connect-timeout", "1", id}}, {"submit", {"--no-start"}}};
    // All at once: each waits out its own time for an answer (5 s), not one after the other.
    std::vector<std::unique_ptr<TempDir>> dirs;
    std::vector<std::unique_ptr<Process>> started;
    for (const auto& [name, args] : commands) {
        dirs.push_back(std::make_unique<TempDir>());
        started.push_back(std::make_unique<Process>(*dirs.back(), command(name, args, "true\n")));
    }
    for (std::size_t i = 0; i < commands.size(); ++i) {
        const auto& name = commands[i].first;
        const auto result = started[i]->wait();
        EXPECT_FALSE(result.timed_out) << name;
        // submit's and wait's own status for "try again later" (EX_TEMPFAIL): both ride out a
        // server out of reach for --connect-timeout
        const bool tempfail = name == "submit" || name == "wait";
        EXPECT_EQ(result.exit_status, tempfail ? 75 : 255) << name << ": " << result.err;
        EXPECT_NE(result.err.find("no answer within"), std::string::npos) << name << ": " << result.err;
    }
    redis().resume();
    EXPECT_EQ(gpusched("queue").exit_status, 0);
}

// What a job asks for itself (submit -n, --timeout, --retries) is what the worker that takes
// it gives it, over the worker's own options.
TEST_P(QueueVerbs, EachJobGetsTheGpusTimeoutAndRetriesItWasSubmittedWith)
{
    start_worker("0,1,2", {"--timeout", "1h", "--retries", "0"});
    const auto pair =
        submit_jobs(fmt::format("echo \"pair $CUDA_VISIBLE_DEVICES\" >> {}\n", log()), {"-n", "2"});
    const auto single =
        submit_jobs(fmt::format("echo \"single $CUDA_VISIBLE_DEVICES\" >> {}\n", log()));
    const auto slow = submit_jobs("sleep 60\n", {"--timeout", "1"});
    const auto count = (m_dir / "tries").string();
    const auto flaky = submit_jobs(
        fmt::format("echo try >> {0}; [ $(wc -l < {0}) -ge 3 ]\n", count), {"--retries", "2"});
    EXPECT_EQ(
        gpusched("wait", {std::to_string(pair.at(0)), std::to_string(single.at(0))}).exit_status,
        0);
    std::map<std::string, std::string> seen;
    for (const auto& line : log_lines()) {
        seen[line.substr(0, line.find(' '))] = line.substr(line.find(' ') + 1);
    }
    EXPECT_EQ(std::count(seen["pair"].begin(), seen["pair"].end(), ','), 1) << seen["pair"];
    EXPECT_EQ(seen["single"].find(','), std::string::npos) << seen["single"];

    const auto timed_out = gpusched("wait", {std::to_string(slow.at(0))}, std::nullopt, 30s);
    EXPECT_EQ(timed_out.exit_status, 1) << "its own 1 s, not the worker's hour";
    EXPECT_EQ(state_of(slow[0]), "failed");

    EXPECT_EQ(gpusched("wait", {std::to_string(flaky.at(0))}).exit_status, 0)
        << "its own two retries, not the worker's none";
    EXPECT_EQ(split_lines(read_file(count)).size(), 3u);
}

TEST_P(QueueVerbs, ALabelStandsForItsJobs)
{
    const auto ids = submit_jobs("echo one\necho two\n", {"--name", "sweep-a"});
    ASSERT_EQ(ids.size(), 2u);
    const auto listed = listing();
    ASSERT_EQ(listed["next"].size(), 2u);
    EXPECT_EQ(listed["next"][0]["name"], "sweep-a");
    const auto text = gpusched("queue");
    EXPECT_NE(text.out.find(fmt::format("job {} [sweep-a]", ids[0])), std::string::npos)
        << text.out;

    start_worker("0");
    const auto waited = gpusched("wait", {"sweep-a"});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(state_of(ids[0]), "succeeded");
    EXPECT_EQ(state_of(ids[1]), "succeeded");

    const auto one = submit_jobs("echo solo\n", {"--name", "solo"});
    EXPECT_EQ(gpusched("wait", {"solo"}).exit_status, 0);
    const auto logs = gpusched("logs", {"solo"});
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(logs.out, "solo\n");

    const auto unknown = gpusched("wait", {"nobody"});
    EXPECT_EQ(unknown.exit_status, 255) << "a usage error, as an unknown id is";
    EXPECT_NE(unknown.err.find("no job of yours labelled 'nobody'"), std::string::npos)
        << unknown.err;
    const auto after_unknown = run(m_dir, submit("true\n", {"--after-ok", "nobody"}));
    EXPECT_EQ(after_unknown.exit_status, 255) << after_unknown.err;
    EXPECT_EQ(run(m_dir, submit("true\n", {"--after-ok", "999999"})).exit_status, 255);
    const auto bad = run(m_dir, submit("true\n", {"--name", "1st"}));
    EXPECT_NE(bad.exit_status, 0);
    EXPECT_NE(bad.err.find("'1st' is not a label"), std::string::npos) << bad.err;
}

// A job asking for more GPUs than a worker has is not run there, and runs on a worker that
// has them.
TEST_P(QueueVerbs, AJobAskingForMoreGpusThanAWorkerHasWaitsForOneThatHasThem)
{
    start_worker("0");
    ASSERT_TRUE(eventually([&] { return served_only_on("0"); }));
    const auto submitted = run(
        m_dir, submit(fmt::format("echo \"$CUDA_VISIBLE_DEVICES\" >> {}\n", log()), {"-n", "2"}));
    EXPECT_NE(submitted.err.find("the jobs ask for 2 GPUs each, but the workers of queue default "
                                 "have at most 1"),
              std::string::npos)
        << submitted.err;
    const auto big = listed_ids();
    ASSERT_EQ(big.size(), 1u);
    // Passed by: what comes after it runs on the small worker.
    const auto small = submit_jobs("true\n");
    EXPECT_EQ(gpusched("wait", {std::to_string(small.at(0))}).exit_status, 0);
    ASSERT_TRUE(eventually([&] { return worker_err(0).find("asks for") != std::string::npos; }))
        << worker_err(0);
    EXPECT_EQ(state_of(*big.begin()), "queued");
    start_worker("1,2");
    EXPECT_EQ(gpusched("wait", {std::to_string(*big.begin())}).exit_status, 0);
    EXPECT_EQ(log_lines(), std::vector<std::string>{"1,2"});
}

// --after: a job waits, out of the workers' reach, until the jobs it names have ended, then
// runs whatever their outcome; --after-ok: it runs only if they succeeded, else it is skipped
// (and so are the jobs waiting for its success), never run.
TEST_P(QueueVerbs, AJobSubmittedAfterOthersWaitsForTheirEnd)
{
    start_worker("0,1");
    const auto go = (m_dir / "go").string();
    const auto first = submit_jobs(
        fmt::format("while [ ! -e {} ]; do sleep 0.05; done; echo first >> {}\n", go, log()),
        {"--name", "first"});
    const auto second =
        submit_jobs(fmt::format("echo second >> {}\n", log()), {"--after", "first"});
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(state_of(second[0]), "waiting");
    const auto listed = listing();
    EXPECT_EQ(listed["waiting"], 1);
    ASSERT_EQ(listed["waiting_jobs"].size(), 1u);
    EXPECT_EQ(listed["waiting_jobs"][0]["after"], nlohmann::json::array({first.at(0)}));
    const auto text = gpusched("queue");
    EXPECT_NE(text.out.find(fmt::format("job {} for {} to end", second[0], first[0])),
              std::string::npos)
        << text.out;
    const auto retried = gpusched("retry", {std::to_string(second[0])});
    EXPECT_EQ(retried.exit_status, 1);
    EXPECT_NE(retried.err.find("is waiting"), std::string::npos) << retried.err;
    // Cancelled while it waits, then queued again: it waits again, for the same job.
    EXPECT_EQ(gpusched("cancel", {std::to_string(second[0])}).exit_status, 0);
    EXPECT_EQ(state_of(second[0]), "cancelled");
    EXPECT_EQ(gpusched("retry", {std::to_string(second[0])}).exit_status, 0);
    EXPECT_EQ(state_of(second[0]), "waiting");

    write_file(go, "");
    const auto waited = gpusched("wait", {std::to_string(second[0])});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(log_lines(), (std::vector<std::string>{"first", "second"}));
}

TEST_P(QueueVerbs, AJobAfterAFailureRunsButAJobAfterItsSuccessIsSkipped)
{
    start_worker("0,1");
    const auto go = (m_dir / "go").string();
    const auto failing =
        submit_jobs(fmt::format("while [ ! -e {} ]; do sleep 0.05; done; exit 3\n", go));
    const auto id = std::to_string(failing.at(0));
    const auto needs_it = submit_jobs(fmt::format("echo never >> {}\n", log()), {"--after-ok", id});
    const auto after_skip = submit_jobs(fmt::format("echo after-skip >> {}\n", log()),
                                        {"--after", std::to_string(needs_it.at(0))});
    const auto chain = submit_jobs(fmt::format("echo never >> {}\n", log()),
                                   {"--after-ok", std::to_string(needs_it[0])});
    const auto regardless =
        submit_jobs(fmt::format("echo regardless >> {}\n", log()), {"--after", id});
    const auto cancelled = submit_jobs("true\n", {"--after", id});
    EXPECT_EQ(gpusched("cancel", {std::to_string(cancelled.at(0))}).exit_status, 0);
    EXPECT_EQ(state_of(cancelled[0]), "cancelled");

    write_file(go, "");
    const auto waited = gpusched("wait", {std::to_string(needs_it[0])});
    EXPECT_EQ(waited.exit_status, 1) << waited.err;
    EXPECT_NE(waited.err.find(fmt::format("skipped: job {} failed", id)), std::string::npos)
        << waited.err;
    EXPECT_EQ(gpusched("wait", {std::to_string(after_skip.at(0)), std::to_string(regardless.at(0))})
                  .exit_status,
              0);
    EXPECT_EQ(state_of(chain.at(0)), "skipped") << "skipped as what it waited for was";
    EXPECT_EQ(state_of(needs_it[0]), "skipped");
    const auto again = gpusched("retry", {std::to_string(needs_it[0])});
    EXPECT_EQ(again.exit_status, 1);
    EXPECT_NE(again.err.find(fmt::format("would be skipped again (job {} failed)", id)),
              std::string::npos)
        << again.err;
    EXPECT_EQ(state_of(needs_it[0]), "skipped");
    auto lines = log_lines();
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, (std::vector<std::string>{"after-skip", "regardless"}));
    EXPECT_EQ(listing()["skipped"], 2);

    // Submitted after the failure: skipped at once.
    const auto late = run(m_dir, submit("true\n", {"--after-ok", id, "--wait"}));
    EXPECT_EQ(late.exit_status, 1) << late.err;
    EXPECT_NE(late.err.find("skipped"), std::string::npos) << late.err;
    const auto unknown = run(m_dir, submit("true\n", {"--after", "999999"}));
    EXPECT_NE(unknown.exit_status, 0);
    EXPECT_NE(unknown.err.find("no job 999999"), std::string::npos) << unknown.err;
}

// `worker --stop` drains a worker: its running job ends as it would, nothing more starts, and
// it exits 0; `--stop --now` stops it as SIGTERM does: its running job goes back to the queue.
TEST_P(QueueVerbs, AWorkerAskedToStopFinishesItsJobsOrStopsThemNow)
{
    auto& worker = start_worker("0");
    const auto go = (m_dir / "go").string();
    const auto running = submit_jobs(
        fmt::format("while [ ! -e {} ]; do sleep 0.05; done; echo ran >> {}\n", go, log()));
    ASSERT_TRUE(eventually([&] { return state_of(running.at(0)) == "running"; }));
    const auto next = submit_jobs("true\n");
    const auto listed = nlohmann::json::parse(gpusched("workers", {"--json"}).out);
    ASSERT_EQ(listed["workers"].size(), 1u);
    const std::string id = listed["workers"][0]["id"];
    const auto unknown = gpusched("worker", {"--stop", "no-such-worker"});
    EXPECT_EQ(unknown.exit_status, 1);
    EXPECT_NE(unknown.err.find("no worker no-such-worker"), std::string::npos) << unknown.err;

    const auto drain = gpusched("worker", {"--stop", id});
    EXPECT_EQ(drain.exit_status, 0) << drain.err;
    EXPECT_NE(drain.out.find("finishes its running jobs and starts none"), std::string::npos)
        << drain.out;
    ASSERT_TRUE(eventually([&] {
        return worker.err_so_far().find("asked to stop") != std::string::npos;
    })) << worker.err_so_far();
    write_file(go, "");
    const auto drained = worker.wait(30s);
    EXPECT_EQ(drained.exit_status, 0) << drained.err;
    EXPECT_EQ(state_of(running[0]), "succeeded");
    EXPECT_EQ(state_of(next.at(0)), "queued") << "nothing new started";

    auto& second = start_worker("0");
    std::filesystem::remove(go);
    const auto held = submit_jobs(
        fmt::format("while [ ! -e {} ]; do sleep 0.05; done; echo held >> {}\n", go, log()),
        {"--front"});
    ASSERT_TRUE(eventually([&] { return state_of(held.at(0)) == "running"; }));
    const auto now = gpusched("worker", {"--stop", "--now"}); // every worker of ours
    EXPECT_EQ(now.exit_status, 0) << now.err;
    const auto stopped = second.wait(30s);
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    EXPECT_EQ(state_of(held[0]), "queued") << "back in the queue, to run again";
    EXPECT_EQ(log_lines(), std::vector<std::string>{"ran"});
    const auto none = gpusched("worker", {"--stop"});
    EXPECT_EQ(none.exit_status, 0) << none.err;
    EXPECT_NE(none.out.find("no worker of yours to stop"), std::string::npos) << none.out;
}

// `worker --update --gpus ...` changes a queue's GPUs without losing a job: the worker there
// finishes its running job and starts none, and the new one runs the next jobs on its GPUs.
TEST_P(QueueVerbs, AnUpdatedWorkerTakesOverAndTheOldOneFinishesItsJobs)
{
    auto& old = start_worker("0");
    const auto go = (m_dir / "go").string();
    const auto running = submit_jobs(fmt::format(
        "while [ ! -e {} ]; do sleep 0.05; done; echo \"old $CUDA_VISIBLE_DEVICES\" >> {}\n", go,
        log()));
    ASSERT_TRUE(eventually([&] { return state_of(running.at(0)) == "running"; }));
    // A new worker that cannot run takes over nothing.
    const auto unable = gpusched("worker", {"--update", "--gpus", "zz!"});
    EXPECT_NE(unable.exit_status, 0);
    EXPECT_EQ(old.err_so_far().find("asked to stop"), std::string::npos) << old.err_so_far();
    auto& updated = start_worker("1,2", {"--update"});
    ASSERT_TRUE(eventually([&] {
        return old.err_so_far().find("asked to stop") != std::string::npos;
    })) << old.err_so_far();
    const auto next =
        submit_jobs(fmt::format("echo \"new $CUDA_VISIBLE_DEVICES\" >> {}\n", log()), {"-n", "2"});
    EXPECT_EQ(gpusched("wait", {std::to_string(next.at(0))}).exit_status, 0);
    EXPECT_EQ(state_of(running[0]), "running") << "the old worker's job runs on";
    write_file(go, "");
    const auto drained = old.wait(30s);
    EXPECT_EQ(drained.exit_status, 0) << drained.err;
    EXPECT_EQ(state_of(running[0]), "succeeded");
    auto lines = log_lines();
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, (std::vector<std::string>{"new 1,2", "old 0"}));
    EXPECT_TRUE(updated.running());
}

// A job cancelled while its worker was stopped, then killed, ends as cancelled when the worker
// is found gone; the jobs waiting for it then go on.
TEST_P(QueueVerbs, AKilledWorkersCancelledJobLetsItsWaitersGoOn)
{
    // A short lease: a Redis worker's jobs go back once its lease runs out.
    auto& worker = start_worker("0", {"--lease-timeout", "2s", "--kill-after", "1s"});
    const auto first = submit_jobs("sleep 100\n");
    ASSERT_TRUE(eventually([&] { return state_of(first.at(0)) == "running"; }));
    const auto after = submit_jobs(fmt::format("echo after >> {}\n", log()),
                                   {"--after", std::to_string(first[0])});
    worker.signal(SIGSTOP);
    EXPECT_EQ(gpusched("cancel", {std::to_string(first[0])}).exit_status, 0);
    worker.signal(SIGKILL);
    worker.wait();
    start_worker("0", {"--lease-timeout", "2s", "--kill-after", "1s"});
    const auto waited = gpusched("wait", {std::to_string(after.at(0))});
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(state_of(first[0]), "cancelled");
    EXPECT_EQ(log_lines(), std::vector<std::string>{"after"});
}

INSTANTIATE_TEST_SUITE_P(Stores, QueueVerbs, ::testing::Values(Store::sqlite, Store::redis),
                         store_name);

} // namespace
} // namespace gpusched::testing
