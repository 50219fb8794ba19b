// --mem with the real runner, real jobs and the real probe children; only the driver is fake
// (fakes/): a job "allocates" by adding a `process` line of its own shell to the machine, and
// frees it by ending.
#include "gpu_memory_fixture.hpp"
#include "redis_server.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(GpuMemory, JobsShareAGpuWhileTheyFitAndNoMoreThanItHasIsPromised)
{
    machine(k_one_gpu);
    std::string input;
    for (int job = 1; job <= 4; ++job) {
        input += held_job(job);
    }
    // 80.6 GiB free: two jobs of 30 GiB, not three.
    Process gpusched(m_dir, on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "-v"}, input));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << gpusched.err_so_far();
    const auto seen = looks(gpusched.err_so_far());
    ASSERT_TRUE(eventually([&] { return looks(gpusched.err_so_far()) >= seen + 2; }))
        << "memory is looked at again while jobs wait for it: " << gpusched.err_so_far();
    EXPECT_EQ(started(), 2u) << "a third job of 30 GiB was started";
    write_file(go(), "");
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(started(), 4u);
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
}

TEST_F(GpuMemory, AJobThatUsesMoreThanItAskedLeavesOnlyWhatIsLeftToTheNext)
{
    machine(k_one_gpu);
    const auto queue = m_dir / "queue";
    Process gpusched(m_dir, on_fake({"--gpus", "0", "--mem", "10G", "--no-lock", "-v", "--fifo",
                                     queue.string()}));
    ASSERT_TRUE(eventually([&] { return fs::exists(queue); }));
    // Job 1 asks for 10 GiB and allocates 75000 MiB: 5559 MiB are left, too few for job 2.
    const auto allocated = m_dir / "allocated";
    write_file(queue, held_job(1, fmt::format("echo 'process 0 '$$' 75000' >> {}; touch {}; ",
                                              (m_dir / "machine").string(), allocated.string())));
    ASSERT_TRUE(eventually([&] { return fs::exists(allocated); })) << gpusched.err_so_far();
    // A look that began before the allocation may not have seen it: two more have.
    const auto seen = looks(gpusched.err_so_far());
    ASSERT_TRUE(eventually([&] { return looks(gpusched.err_so_far()) >= seen + 2; }))
        << gpusched.err_so_far();
    write_file(queue, held_job(2));
    const auto waiting = looks(gpusched.err_so_far());
    ASSERT_TRUE(eventually([&] { return looks(gpusched.err_so_far()) >= waiting + 2; }))
        << gpusched.err_so_far();
    EXPECT_EQ(started(), 1u) << "job 2 started beside a job that used 75000 MiB";
    write_file(go(), ""); // job 1 ends, its memory is freed, and job 2 starts
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << gpusched.err_so_far();
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());
}

TEST_F(GpuMemory, AnotherUsersProcessLeavesLessAndAJobWaitsUntilItFits)
{
    // Someone else's process (this test's, which no job descends from) uses 60000 MiB.
    machine(k_one_gpu + fmt::format("process 0 {} 60000\n", getpid()));
    Process gpusched(m_dir,
                     on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "-v"}, held_job(1)));
    const auto before = looks(gpusched.err_so_far());
    ASSERT_TRUE(eventually([&] { return looks(gpusched.err_so_far()) >= before + 2; }))
        << gpusched.err_so_far();
    EXPECT_EQ(started(), 0u) << "started with 20.6 GiB free";
    machine(k_one_gpu); // it ends
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << gpusched.err_so_far();
    write_file(go(), "");
    EXPECT_EQ(gpusched.wait().exit_status, 0);
}

TEST_F(GpuMemory, WithoutNvmlEachJobThatAsksForMemoryHasItsGpuToItself)
{
    machine(k_one_gpu + "fail nvmlInit_v2\n");
    std::string input;
    for (int job = 1; job <= 2; ++job) {
        input += fmt::format("echo start {0} >> {1}; sleep 0.3; echo end {0} >> {1}\n", job,
                             log().string());
    }
    const auto result = run(m_dir, on_fake({"--gpus", "0", "--mem", "1G", "--no-lock"}, input));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(started(), 2u);
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());
    EXPECT_NE(result.err.find("a job that asks for memory has its GPU to itself"),
              std::string::npos)
        << result.err;
}

TEST_F(GpuMemory, WithMemAutoTheFirstJobRunsAloneAndTheNextArePackedByWhatItUsed)
{
    machine(k_one_gpu);
    // Each allocates 30000 MiB and runs long enough for looks to see it. Job 1, of a kind
    // never seen, runs alone; then each counts 36000 MiB (its peak and a fifth): two at once.
    std::string input;
    for (int job = 1; job <= 4; ++job) {
        input += fmt::format("echo 'process 0 '$$' 30000' >> {0}; echo start {1} >> {2}; "
                             "sleep 2.5; echo end {1} >> {2}\n",
                             (m_dir / "machine").string(), job, log().string());
    }
    const auto result = run(m_dir, on_fake({"--gpus", "0", "--mem", "auto", "--no-lock"}, input));
    EXPECT_EQ(result.exit_status, 0) << result.err;
    const auto lines = split_lines(read_file(log()));
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[0], "start 1");
    EXPECT_EQ(lines[1], "end 1") << "a job started beside the first of its kind";
    EXPECT_EQ(started(), 4u);
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
}

TEST_F(GpuMemory, TheJobLogKeepsEachPeakAndTheNextRunWithMemAutoStartsPacked)
{
    machine(k_one_gpu);
    const auto jobs = [&](int first, int last) {
        std::string input;
        for (int job = first; job <= last; ++job) {
            input += fmt::format("echo 'process 0 '$$' 30000' >> {0}; echo start {1} >> {2}; "
                                 "sleep 2; echo end {1} >> {2}\n",
                                 (m_dir / "machine").string(), job, log().string());
        }
        return input;
    };
    const auto joblog = (m_dir / "jobs.log").string();
    const auto first =
        run(m_dir,
            on_fake({"--gpus", "0", "--mem", "auto", "--no-lock", "--joblog", joblog}, jobs(1, 1)));
    ASSERT_EQ(first.exit_status, 0) << first.err;
    const auto records = split_lines(read_file(joblog));
    ASSERT_EQ(records.size(), 2u) << read_file(joblog);
    EXPECT_NE(records[1].find("\tgpu=0;peak=30000M\t"), std::string::npos) << records[1];
    const auto report = run(m_dir, {{"report", joblog}});
    EXPECT_EQ(report.exit_status, 0) << report.err;
    EXPECT_NE(report.out.find("GPU memory peak 29.3 GiB (job 1), recorded for 1 job"),
              std::string::npos)
        << report.out;
    // GNU parallel reads the log as ever: its --resume finds job 1 done and runs nothing.
    if (std::system("parallel --version > /dev/null 2>&1") == 0) {
        LaunchOptions resume{{"-c", "exec parallel --will-cite --resume --joblog " + joblog},
                             "false\n"};
        resume.program = "/bin/sh";
        const auto resumed = run(m_dir, resume);
        EXPECT_EQ(resumed.exit_status, 0) << resumed.err;
        EXPECT_EQ(split_lines(read_file(joblog)).size(), 2u) << read_file(joblog);
    }

    // A new run of the same kind of jobs, logged to the same file: its first jobs are packed
    // by the peak the log kept (30000 MiB and a fifth: two at once), none runs alone first.
    fs::remove(log());
    const auto second =
        run(m_dir,
            on_fake({"--gpus", "0", "--mem", "auto", "--no-lock", "--joblog", joblog}, jobs(1, 4)));
    ASSERT_EQ(second.exit_status, 0) << second.err;
    const auto lines = split_lines(read_file(log()));
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[0].substr(0, 5), "start");
    EXPECT_EQ(lines[1].substr(0, 5), "start") << "the first job ran alone: " << read_file(log());
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
}

TEST_F(GpuMemory, AJobOutOfMemoryBesideAnotherRunsAgainUncountedAndAloneItFails)
{
    machine(k_one_gpu);
    const auto out = m_dir / "out";
    const auto tried = m_dir / "tried";
    // Job 1 runs out of memory the first time, once job 2 runs beside it (as PyTorch says).
    const auto first = fmt::format(
        "if [ ! -e {0} ]; then touch {0}; until grep -q 'start 2' {1} 2>/dev/null; do sleep 0.05; "
        "done; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; "
        "exit 1; fi; echo start 1 again >> {1}\n",
        tried.string(), log().string());
    const auto second =
        fmt::format("echo start 2 >> {0}; sleep 1; echo end 2 >> {0}\n", log().string());
    const auto shared = run(
        m_dir, on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "--output-dir", out.string()},
                       first + second));
    EXPECT_EQ(shared.exit_status, 0) << shared.err;
    EXPECT_NE(shared.err.find("job 1 ran out of GPU memory beside other jobs: it runs again "
                              "(attempt 2, not counted as a retry), asking 45 GiB"),
              std::string::npos)
        << shared.err;
    EXPECT_NE(shared.err.find("1 attempt run again after running out of GPU memory"),
              std::string::npos)
        << shared.err;
    EXPECT_TRUE(fs::exists(out / "1.err")) << "the first attempt's output is kept";
    EXPECT_NE(read_file(log()).find("start 1 again"), std::string::npos);

    // Alone on its GPU, the same end is the job's own failure.
    fs::remove(tried);
    write_file(log(), "start 2\n");
    const auto alone = run(
        m_dir,
        on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "--output-dir", out.string()}, first));
    EXPECT_EQ(alone.exit_status, 1) << alone.err;
    EXPECT_EQ(alone.err.find("runs again"), std::string::npos) << alone.err;
}

TEST_F(GpuMemory, StatusAndGpusShowWhatEachJobAndEachGpuWasPromised)
{
    machine(k_one_gpu);
    Process gpusched(m_dir, on_fake({"--gpus", "0", "--mem", "1.5G"}, held_job(1) + held_job(2)));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << gpusched.err_so_far();
    // Its jobs share the GPU by memory: no lease of it, a memory share per job.
    nlohmann::json gpu;
    ASSERT_TRUE(eventually([&] {
        const auto status = run(m_dir, on_fake({"status", "--gpus", "0", "--json"}));
        const auto gpus = json_field(status.out, "gpus");
        if (!gpus.is_array() || gpus.empty()) {
            return false;
        }
        gpu = gpus[0];
        return gpu["state"] == "shared" && gpu["memory_shares"].size() == 1 &&
               gpu["memory_shares"][0]["jobs"] == 2;
    })) << gpusched.err_so_far()
        << gpu;
    EXPECT_EQ(gpu["memory_shares"][0]["pid"], gpusched.pid()) << gpu;
    EXPECT_EQ(gpu["memory_shares"][0]["uid"], getuid()) << gpu;
    EXPECT_EQ(gpu["memory_shares"][0]["memory_reserved_mib"], 3072) << gpu;
    EXPECT_EQ(gpu["memory_reserved_mib"], 3072) << "the sum of its jobs': " << gpu;
    EXPECT_TRUE(gpu["record"].is_null()) << gpu;
    const auto table = run(m_dir, on_fake({"status", "--gpus", "0"}));
    EXPECT_NE(table.out.find("shared"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("(2 jobs sharing it by memory, 3 GiB promised)"), std::string::npos)
        << table.out;
    // `gpus` says it beside what NVML tells of the GPU.
    // --gpus: a build without CUDA discovers none.
    const auto gpus_json = run(m_dir, on_fake({"gpus", "--gpus", "0", "--json"}));
    const auto listed = json_field(gpus_json.out, "gpus");
    ASSERT_EQ(listed.size(), 1u) << gpus_json.out << gpus_json.err;
    EXPECT_EQ(listed[0]["memory_reserved_mib"], 3072) << listed;
    const auto gpus_table = run(m_dir, on_fake({"gpus", "--gpus", "0"}));
    EXPECT_NE(gpus_table.out.find("RESERVED"), std::string::npos) << gpus_table.out;
    EXPECT_NE(gpus_table.out.find(" 3072 MiB "), std::string::npos) << gpus_table.out;
    write_file(go(), "");
    EXPECT_EQ(gpusched.wait().exit_status, 0);
}

TEST_F(GpuMemory, AQueuedJobCarriesItsMemoryToTheWorkerThatRunsIt)
{
    machine(k_one_gpu);
    const auto in_queue = [this](std::vector<std::string> args, const std::string& input = "") {
        auto options = on_fake(std::move(args), input);
        options.env["XDG_STATE_HOME"] = (m_dir / "state").string();
        options.env["XDG_CACHE_HOME"] = (m_dir / "cache").string();
        return options;
    };
    // Three jobs of 30 GiB for a worker that asks nothing itself: two at once.
    for (int job = 1; job <= 3; ++job) {
        const auto submitted =
            run(m_dir, in_queue({"submit", "--no-start", "--mem", "30G", "-q"}, held_job(job)));
        ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
    }
    Process worker(m_dir, in_queue({"worker", "--gpus", "0", "--no-lock", "-v"}));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << worker.err_so_far();
    const auto seen = looks(worker.err_so_far());
    ASSERT_TRUE(eventually([&] { return looks(worker.err_so_far()) >= seen + 2; }))
        << worker.err_so_far();
    EXPECT_EQ(started(), 2u) << "a third job of 30 GiB started";
    write_file(go(), "");
    ASSERT_TRUE(eventually([&] { return started() == 3; })) << worker.err_so_far();
    const auto waited = run(m_dir, in_queue({"wait", "1", "2", "3"}));
    EXPECT_EQ(waited.exit_status, 0) << waited.err;
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
    worker.signal(SIGTERM);
    worker.wait();
}

// What a queued job asked for and used is kept with it, in either store, and `queue` and
// `queue --json` say it.
TEST_F(GpuMemory, TheQueueKeepsEachJobsPeakInEitherStore)
{
    machine(k_one_gpu);
    RedisServer redis;
    for (const bool on_redis : {false, true}) {
        SCOPED_TRACE(on_redis ? "redis" : "sqlite");
        const auto in_queue = [&](std::vector<std::string> args) {
            return GpuMemory::in_queue(std::move(args), on_redis ? redis.url() : "");
        };
        auto submit = in_queue({"submit", "--no-start", "--mem", "30G", "-q", "--json", "--",
                                fmt::format("echo 'process 0 '$$' 20000' >> {}; sleep 2",
                                            (m_dir / "machine").string())});
        const auto submitted = run(m_dir, submit);
        ASSERT_EQ(submitted.exit_status, 0) << submitted.err;
        const auto id = json_field(submitted.out, "ids")[0].get<std::int64_t>();
        const auto learned = run(m_dir, in_queue({"submit", "--no-start", "--mem", "auto", "-q",
                                                  "--name", "later", "--", "true"}));
        ASSERT_EQ(learned.exit_status, 0) << learned.err;
        // Queued, each job says what it asked for.
        const auto queued = json_field(run(m_dir, in_queue({"queue", "--json"})).out, "next");
        ASSERT_EQ(queued.size(), 2u) << queued;
        EXPECT_EQ(queued[0]["gpu_memory_asked_mib"], 30720) << queued[0];
        EXPECT_EQ(queued[0]["gpu_memory_learned"], false) << queued[0];
        EXPECT_EQ(queued[1]["gpu_memory_asked_mib"], nullptr) << queued[1];
        EXPECT_EQ(queued[1]["gpu_memory_learned"], true) << queued[1];
        const auto next = run(m_dir, in_queue({"queue"})).out;
        EXPECT_NE(next.find(fmt::format("job {} (GPU memory 30 GiB)", id)), std::string::npos)
            << next;
        EXPECT_NE(next.find("[later] (GPU memory learned)"), std::string::npos) << next;
        const auto cancelled = run(m_dir, in_queue({"cancel", "later"}));
        ASSERT_EQ(cancelled.exit_status, 0) << cancelled.err;
        Process worker(m_dir, in_queue({"worker", "--gpus", "0", "--no-lock"}));
        const auto waited = run(m_dir, in_queue({"wait", std::to_string(id)}));
        EXPECT_EQ(waited.exit_status, 0) << waited.err;
        worker.signal(SIGTERM);
        worker.wait();
        const auto listed = run(m_dir, in_queue({"queue", "--json"}));
        const auto recent = json_field(listed.out, "recent");
        ASSERT_TRUE(recent.is_array() && !recent.empty()) << listed.out;
        EXPECT_EQ(recent[0]["id"], id);
        EXPECT_EQ(recent[0]["gpu_memory_peak_mib"], 20000) << recent[0];
        EXPECT_EQ(recent[0]["gpu_memory_asked_mib"], 30720) << recent[0];
        const auto text = run(m_dir, in_queue({"queue"}));
        EXPECT_NE(text.out.find(fmt::format("job {} exit 0, GPU memory peak 19.5 GiB: ", id)),
                  std::string::npos)
            << text.out;
        machine(k_one_gpu); // the job's process line, gone with it, out of the next
    }
}

// A queued job that runs out of GPU memory beside another runs again in its worker, and the
// queue says so, in either store.
TEST_F(GpuMemory, TheQueueSaysAJobRanAgainAfterRunningOutOfMemoryBesideAnother)
{
    machine(k_one_gpu);
    RedisServer redis;
    for (const bool on_redis : {false, true}) {
        SCOPED_TRACE(on_redis ? "redis" : "sqlite");
        const auto in_queue = [&](std::vector<std::string> args) {
            return GpuMemory::in_queue(std::move(args), on_redis ? redis.url() : "");
        };
        const auto tried = m_dir / (on_redis ? "tried-redis" : "tried-sqlite");
        const auto beside = m_dir / (on_redis ? "beside-redis" : "beside-sqlite");
        // The first attempt runs out of memory once the other job runs beside it.
        const auto first = run(
            m_dir, in_queue({"submit", "--no-start", "--mem", "30G", "-q", "--json", "--",
                             fmt::format("if [ ! -e {0} ]; then touch {0}; until [ -e {1} ]; do "
                                         "sleep 0.05; done; echo 'CUDA error: out of memory' >&2; "
                                         "exit 1; fi",
                                         tried.string(), beside.string())}));
        ASSERT_EQ(first.exit_status, 0) << first.err;
        const auto id = json_field(first.out, "ids")[0].get<std::int64_t>();
        const auto second =
            run(m_dir, in_queue({"submit", "--no-start", "--mem", "30G", "-q", "--",
                                 fmt::format("touch {}; sleep 1", beside.string())}));
        ASSERT_EQ(second.exit_status, 0) << second.err;
        Process worker(m_dir, in_queue({"worker", "--gpus", "0", "--no-lock"}));
        const auto waited = run(m_dir, in_queue({"wait", std::to_string(id)}));
        EXPECT_EQ(waited.exit_status, 0) << waited.err << worker.err_so_far();
        worker.signal(SIGTERM);
        worker.wait();
        const auto listed = run(m_dir, in_queue({"queue", "--json", "--failures", "5"}));
        nlohmann::json job;
        for (const auto& ended : json_field(listed.out, "recent")) {
            if (ended["id"] == id) {
                job = ended;
            }
        }
        ASSERT_TRUE(job.is_object()) << listed.out;
        EXPECT_EQ(job["state"], "succeeded") << job;
        EXPECT_EQ(job["gpu_memory_reruns"], 1) << job;
        const auto text = run(m_dir, in_queue({"queue"}));
        EXPECT_NE(text.out.find(fmt::format(
                      "job {} exit 0, run again 1 time after running out of GPU memory beside "
                      "others: ",
                      id)),
                  std::string::npos)
            << text.out;
    }
}

// A job that ran again after running out of memory beside another, then failed, and that
// `retry` queues again, starts anew: no run again of its last time is said of it.
TEST_F(GpuMemory, ARetriedJobForgetsThatItRanOutOfMemoryBefore)
{
    machine(k_one_gpu);
    RedisServer redis;
    for (const bool on_redis : {false, true}) {
        SCOPED_TRACE(on_redis ? "redis" : "sqlite");
        const auto in_queue = [&](std::vector<std::string> args) {
            return GpuMemory::in_queue(std::move(args), on_redis ? redis.url() : "");
        };
        const auto tried = m_dir / (on_redis ? "tried-redis" : "tried-sqlite");
        const auto beside = m_dir / (on_redis ? "beside-redis" : "beside-sqlite");
        // Out of memory once beside the other job, then a failure of its own.
        const auto first = run(
            m_dir, in_queue({"submit", "--no-start", "--mem", "30G", "-q", "--json", "--",
                             fmt::format("if [ ! -e {0} ]; then touch {0}; until [ -e {1} ]; do "
                                         "sleep 0.05; done; echo 'CUDA error: out of memory' >&2; "
                                         "exit 1; fi; exit 3",
                                         tried.string(), beside.string())}));
        ASSERT_EQ(first.exit_status, 0) << first.err;
        const auto id = json_field(first.out, "ids")[0].get<std::int64_t>();
        ASSERT_EQ(run(m_dir, in_queue({"submit", "--no-start", "--mem", "30G", "-q", "--",
                                       fmt::format("touch {}; sleep 1", beside.string())}))
                      .exit_status,
                  0);
        Process worker(m_dir, in_queue({"worker", "--gpus", "0", "--no-lock"}));
        EXPECT_NE(run(m_dir, in_queue({"wait", std::to_string(id)})).exit_status, 0);
        worker.signal(SIGTERM);
        worker.wait();
        const auto ended = run(m_dir, in_queue({"queue", "--json", "--failures", "5"}));
        nlohmann::json job;
        for (const auto& one : json_field(ended.out, "recent")) {
            job = one["id"] == id ? one : job;
        }
        ASSERT_EQ(job["gpu_memory_reruns"], 1) << ended.out;
        ASSERT_EQ(job["state"], "failed") << job;
        const auto retried = run(m_dir, in_queue({"retry", std::to_string(id)}));
        ASSERT_EQ(retried.exit_status, 0) << retried.err;
        const auto queued = run(m_dir, in_queue({"queue", "--json"}));
        job = nullptr;
        for (const auto& one : json_field(queued.out, "next")) {
            job = one["id"] == id ? one : job;
        }
        ASSERT_TRUE(job.is_object()) << queued.out;
        EXPECT_EQ(job["gpu_memory_reruns"], 0) << job;
        const auto text = run(m_dir, in_queue({"queue"}));
        EXPECT_EQ(text.out.find("running out of GPU memory"), std::string::npos) << text.out;
    }
}

TEST_F(GpuMemory, ANeedOnlyTheDriversOwnMemoryKeepsFromFittingRunsAloneAtOnce)
{
    // 81559 MiB, 1000 of them in use by no process: the driver's, never to be freed.
    machine(k_one_gpu);
    const auto result =
        run(m_dir, on_fake({"--gpus", "0", "--mem", "81559M", "--no-lock"}, "true\n"), 20s);
    EXPECT_FALSE(result.timed_out) << "it waited for memory that never frees";
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

TEST_F(GpuMemory, WhileALookHangsNoJobStartsOnTheLastReading)
{
    machine(k_one_gpu);
    const auto go_first = m_dir / "go-first";
    std::string input;
    for (int job = 1; job <= 2; ++job) {
        input += fmt::format("echo start {0} >> {1}; while [ ! -e {2} ]; do sleep 0.05; done\n",
                             job, log().string(), go_first.string());
    }
    input += held_job(3);
    Process gpusched(
        m_dir, on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "--probe-timeout", "10", "-v"},
                       input));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << gpusched.err_so_far();
    // Someone else takes 60000 MiB, and NVML hangs: the last reading says nothing of it.
    Process other(m_dir, {{"-c", "sleep 60"}, std::nullopt, std::nullopt, {}, "/bin/sh"});
    ASSERT_TRUE(eventually([&] { return process_alive(other.pid()); }));
    machine(k_one_gpu +
            fmt::format("process 0 {} 60000\nhang nvmlDeviceGetMemoryInfo\n", other.pid()));
    std::this_thread::sleep_for(4s); // the last reading is out of date now
    write_file(go_first, "");
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(started(), 2u) << "job 3 started on a reading from before the other's 60000 MiB";
    // The look gives up at its --probe-timeout: then job 3 has the GPU to itself.
    EXPECT_TRUE(eventually([&] { return started() == 3; }, 30s)) << gpusched.err_so_far();
    write_file(go(), "");
    EXPECT_EQ(gpusched.wait().exit_status, 0);
    other.signal(SIGKILL);
}

TEST_F(GpuMemory, AfterAFailedLookMemoryIsReadAgainAndJobsPackOnceMore)
{
    machine(k_one_gpu + "fail nvmlDeviceGetMemoryInfo\n");
    const auto go_first = m_dir / "go-first";
    const auto input = fmt::format("echo start 1 >> {0}; while [ ! -e {1} ]; do sleep 0.05; "
                                   "done; echo end 1 >> {0}\n",
                                   log().string(), go_first.string()) +
                       held_job(2) + held_job(3);
    Process gpusched(m_dir, on_fake({"--gpus", "0", "--mem", "30G", "--no-lock", "-v"}, input));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << gpusched.err_so_far();
    machine(k_one_gpu); // NVML answers again
    ASSERT_TRUE(eventually(
        [&] {
            return gpusched.err_so_far().find("the GPUs' memory can be read again") !=
                   std::string::npos;
        },
        30s))
        << gpusched.err_so_far();
    write_file(go_first, "");
    EXPECT_TRUE(eventually([&] { return started() == 3; })) << gpusched.err_so_far();
    write_file(go(), "");
    EXPECT_EQ(gpusched.wait().exit_status, 0);
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
}

TEST_F(GpuMemory, ExecWithMemTakesAGpuWithRoomAndWaitsWhileTooFewHaveIt)
{
    // Someone's process fills GPU 0 but 10.3 GiB; GPU 1 is free.
    const auto filled = k_gpus + fmt::format("process {} {} 70000\n", k_line_of_gpu_0, getpid());
    machine(filled);
    const auto one = run(m_dir, on_fake({"exec", "--gpus", "0,1", "--mem", "20G", "--", "sh", "-c",
                                         "echo $CUDA_VISIBLE_DEVICES"}));
    EXPECT_EQ(one.exit_status, 0) << one.err;
    EXPECT_EQ(one.out, "1\n") << "the GPU with room: " << one.err;

    const auto refused = run(m_dir, on_fake({"exec", "--gpus", "0,1", "-n", "2", "--mem", "20G",
                                             "--no-wait", "--", "true"}));
    EXPECT_EQ(refused.exit_status, 75) << refused.err;
    EXPECT_NE(refused.err.find("not 2 GPUs with 20 GiB of memory free among 0,1 (GPU 0: 10.3 GiB "
                               "free, GPU 1: 79.6 GiB free)"),
              std::string::npos)
        << refused.err;

    // Two wanted: it waits, and takes both once the process has gone.
    Process waiting(m_dir, on_fake({"exec", "--gpus", "0,1", "-n", "2", "--mem", "20G", "--", "sh",
                                    "-c", "echo $CUDA_VISIBLE_DEVICES"}));
    ASSERT_TRUE(eventually([&] {
        return waiting.err_so_far().find("waiting for 2 GPUs with 20 GiB of memory free") !=
               std::string::npos;
    })) << waiting.err_so_far();
    std::this_thread::sleep_for(1500ms); // looks again, and waits on
    EXPECT_FALSE(waiting.try_wait()) << "it ran without room: " << waiting.err_so_far();
    // `status` lists it among the waiters, for the GPUs it wants.
    const auto waiters = [&] {
        TempDir elsewhere; // not beside the waiting command's own output files
        const auto status = run(elsewhere, on_fake({"status", "--json"}));
        return json_field(status.out, "waiters");
    };
    const auto listed = waiters();
    ASSERT_TRUE(listed.is_array() && listed.size() == 1) << listed;
    EXPECT_EQ(listed[0]["pid"], waiting.pid()) << listed;
    EXPECT_EQ(listed[0]["gpu_count"], 2) << listed;
    // A look that fails once memory has been read is no room: it waits for a reading.
    machine(filled + "fail nvmlDeviceGetMemoryInfo\n");
    ASSERT_TRUE(eventually([&] {
        return waiting.err_so_far().find("GPU memory cannot be read now") != std::string::npos;
    })) << waiting.err_so_far();
    EXPECT_FALSE(waiting.try_wait()) << "it ran on an unread GPU: " << waiting.err_so_far();
    machine(k_gpus);
    const auto got = waiting.wait();
    EXPECT_EQ(got.exit_status, 0) << got.err;
    EXPECT_EQ(got.out, "0,1\n") << got.err;
    EXPECT_EQ(waiters(), nlohmann::json::array()) << "nobody waits any more";

    const auto learned =
        run(m_dir, on_fake({"exec", "--gpus", "0,1", "--mem", "auto", "--", "true"}));
    EXPECT_EQ(learned.exit_status, 255);
    EXPECT_NE(learned.err.find("--mem must be a size"), std::string::npos) << learned.err;
}

TEST_F(GpuMemory, ASizeThatIsNotOneIsAUsageErrorNamingIt)
{
    machine(k_one_gpu);
    for (const std::string size : {"20", "0G", "nanG", "-5G", "20X", ""}) {
        const auto result =
            run(m_dir, on_fake({"--gpus", "0", "--mem", size, "--no-lock"}, "true\n"));
        EXPECT_EQ(result.exit_status, 255) << size << ": " << result.err;
        EXPECT_NE(result.err.find("--mem"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("is not a size of memory"), std::string::npos) << result.err;
    }
}

} // namespace
} // namespace gpusched::testing
