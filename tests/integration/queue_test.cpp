// What a queue does whichever store keeps it: each test runs on a local queue (an SQLite
// database) and on a Redis queue (a real redis-server), with submitters and workers as
// separate processes. What only one store does is tested in sqlite_queue_test.cpp and
// redis_queue_test.cpp.
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <regex>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class Queue : public ::testing::TestWithParam<Store>, public QueueFixture {
protected:
    Queue() : QueueFixture(GetParam()) {}
};

TEST_P(Queue, SubmitWaitsForTheOutcomesAndExitsAsARunWould)
{
    start_worker("0,1");
    const auto result =
        run(m_dir, submit(join_lines({"echo ok >> " + log(), "exit 3", "sh -c 'kill -9 $$'"}),
                          {"--wait"}));
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("3 jobs: 1 succeeded, 2 failed"), std::string::npos) << result.err;
    EXPECT_TRUE(std::regex_search(result.err, std::regex(R"(job 2 .*failed on .*GPU)")))
        << result.err;
    EXPECT_NE(result.err.find("exit 3"), std::string::npos) << result.err;
    // The worker logs the job under its queue id.
    EXPECT_TRUE(
        eventually([&] { return worker_err(0).find("job 2 failed on GPU") != std::string::npos; }));
    EXPECT_EQ(logged()["ok"], 1);
    const auto status = queue_status();
    EXPECT_EQ(status["succeeded"], 1);
    EXPECT_EQ(status["failed"], 2);
    EXPECT_EQ(status["queued"], 0);
    std::vector<std::string> failed;
    for (const auto& job : status["recent"]) {
        if (job["state"] == "failed") {
            failed.push_back(job["command"]);
        }
    }
    std::sort(failed.begin(), failed.end());
    EXPECT_EQ(failed, (std::vector<std::string>{"exit 3", "sh -c 'kill -9 $$'"}));
}

// The worker's closing summary points at a failed job's output where it is kept: the queue,
// not the files of its own output directory (which a Redis worker removes once sent).
TEST_P(Queue, AWorkersSummaryPointsAtTheOutputOfAFailedJobWhereItIsKept)
{
    auto& worker = start_worker("0");
    ASSERT_EQ(run(m_dir, submit("echo kept-output; exit 3\n", {"--wait"})).exit_status, 1);
    worker.signal(SIGUSR1);
    const auto stopped = worker.wait();
    EXPECT_NE(stopped.err.find("failed job 1: exit 3: echo kept-output; exit 3; its output: "
                               "gpusched logs 1"),
              std::string::npos)
        << stopped.err;
    EXPECT_EQ(stopped.err.find("output in "), std::string::npos) << stopped.err;
    const auto logs = run(m_dir, command("logs", {"1"}));
    EXPECT_EQ(logs.exit_status, 0) << logs.err;
    EXPECT_EQ(logs.out, "kept-output\n");
}

TEST_P(Queue, JobsSubmittedBeforeAnyWorkerWaitAndThenRunInOrder)
{
    ASSERT_EQ(run(m_dir, submit(logging_commands(5))).exit_status, 0);
    const auto status = queue_status();
    EXPECT_EQ(status["queued"], 5);
    ASSERT_EQ(status["next"].size(), 5u);
    EXPECT_EQ(status["next"][0]["command"], fmt::format("echo 1 >> {}", log()));
    start_worker("0");
    ASSERT_TRUE(eventually([&] { return logged().size() == 5; }));
    EXPECT_EQ(read_file(m_dir / "log"), "1\n2\n3\n4\n5\n");
}

TEST_P(Queue, AWorkerWakesAsSoonAsAJobIsSubmitted)
{
    start_worker("0");
    // Let the worker find the queue empty and go to sleep (on its presence socket, or in
    // its blocking take).
    ASSERT_TRUE(eventually([&] { return queue_status()["workers"].size() == 1; }));
    const auto result = run(m_dir, submit("true\n", {"--wait"}));
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

TEST_P(Queue, ThreeWorkersRunEachOfAThousandJobsOnce)
{
    for (const auto* gpus :
         {"GPU-a0,GPU-a1,GPU-a2", "GPU-b0,GPU-b1,GPU-b2", "GPU-c0,GPU-c1,GPU-c2"}) {
        start_worker(gpus, {"-q"});
    }
    std::vector<std::string> jobs;
    for (int i = 1; i <= 1000; ++i) {
        jobs.push_back(fmt::format("echo job-{} $CUDA_VISIBLE_DEVICES >> {}", i, log()));
    }
    const auto result = run(m_dir, submit(join_lines(jobs), {"--wait", "-q"}), 120s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    std::map<std::string, int> per_job;
    std::map<char, int> per_worker;
    for (const auto& line : split_lines(read_file(m_dir / "log"))) {
        const auto space = line.find(' ');
        ++per_job[line.substr(0, space)];
        ++per_worker[line.at(space + 5)]; // the worker's letter in GPU-a0
    }
    ASSERT_EQ(per_job.size(), 1000u);
    for (const auto& [job, runs] : per_job) {
        EXPECT_EQ(runs, 1) << job;
    }
    EXPECT_EQ(per_worker.size(), 3u) << "every worker took part";
}

TEST_P(Queue, ConcurrentSubmittersLoseNothing)
{
    // Each submitter in a directory of its own: a process's stdin data is a file there.
    std::vector<std::unique_ptr<TempDir>> dirs;
    std::vector<std::unique_ptr<Process>> submitters;
    for (int i = 0; i < 4; ++i) {
        std::string commands;
        for (int j = 0; j < 250; ++j) {
            commands += fmt::format("echo {}-{} >> {}\n", i, j, log());
        }
        dirs.push_back(std::make_unique<TempDir>());
        submitters.push_back(std::make_unique<Process>(*dirs.back(), submit(commands)));
    }
    for (auto& submitter : submitters) {
        EXPECT_EQ(submitter->wait().exit_status, 0);
    }
    EXPECT_EQ(queue_status()["queued"], 1000);
    start_worker("0,1,2,3");
    ASSERT_TRUE(eventually([&] { return logged().size() == 1000; }, 60s))
        << logged().size() << " of 1000 ran; queue: " << queue_status().dump();
    for (const auto& [line, count] : logged()) {
        EXPECT_EQ(count, 1) << line;
    }
}

// A worker killed (SIGKILL) with its job: the job runs again, on another worker, to its end,
// and no other job runs twice. (A local queue returns it as soon as anyone sees the worker
// gone; a Redis queue once the worker's lease runs out.)
TEST_P(Queue, AKilledWorkersJobRunsAgainElsewhereAndNothingRunsTwice)
{
    const std::vector<std::string> lease = {"--lease-timeout", "1"};
    auto& doomed = start_worker("GPU-a0", on_redis() ? lease : std::vector<std::string>{});
    std::vector<std::string> jobs;
    for (int i = 1; i <= 4; ++i) {
        jobs.push_back(fmt::format("echo start-{} $$ $CUDA_VISIBLE_DEVICES >> {}; sleep 0.5; "
                                   "echo end-{} $CUDA_VISIBLE_DEVICES >> {}",
                                   i, log(), i, log()));
    }
    Process submitter(m_dir, submit(join_lines(jobs), {"--wait"}));
    ASSERT_TRUE(
        eventually([&] { return read_file(m_dir / "log").find("start-1") != std::string::npos; }));
    doomed.signal(SIGKILL);
    doomed.wait();
    // Its job would run on as an orphan; kill it too, as a crashed host would.
    const auto first = split_lines(read_file(m_dir / "log")).front();
    kill(std::stoi(first.substr(first.find(' ') + 1)), SIGKILL);

    start_worker("GPU-b0", on_redis() ? lease : std::vector<std::string>{});
    const auto result = submitter.wait(60s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto counts = logged();
    for (int i = 1; i <= 4; ++i) {
        EXPECT_EQ(counts[fmt::format("end-{} GPU-b0", i)], 1) << read_file(m_dir / "log");
    }
    EXPECT_EQ(counts.count("end-1 GPU-a0"), 0u) << "the killed worker's job never finished";
}

// SIGTERM stops a worker: its running job goes back to the queue (not failed), for another
// worker; a job it finished is never run again.
TEST_P(Queue, AStoppedWorkerGivesItsRunningJobBackAndAFinishedJobNeverRunsAgain)
{
    auto& worker = start_worker("0");
    ASSERT_EQ(run(m_dir, submit(fmt::format("echo done >> {0}\nsleep 30\n", log()))).exit_status,
              0);
    ASSERT_TRUE(eventually([&] { return queue_status()["running"].size() == 1; }));
    worker.signal(SIGTERM);
    const auto stopped = worker.wait(20s);
    EXPECT_EQ(stopped.exit_status, 128 + SIGTERM) << stopped.err;
    const auto status = queue_status();
    EXPECT_EQ(status["succeeded"], 1);
    EXPECT_EQ(status["failed"], 0);
    EXPECT_EQ(status["queued"], 1) << "back in the queue for another worker";
    start_worker("0");
    ASSERT_TRUE(eventually([&] { return queue_status()["running"].size() == 1; }));
    EXPECT_EQ(logged()["done"], 1);
}

INSTANTIATE_TEST_SUITE_P(Stores, Queue, ::testing::Values(Store::sqlite, Store::redis), store_name);

} // namespace
} // namespace gpusched::testing
