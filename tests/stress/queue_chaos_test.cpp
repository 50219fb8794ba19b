// Ten thousand jobs through the Redis queue while workers and redis-server are SIGKILLed at
// random moments and started again: every job ends, succeeds and is counted once; a job runs
// again only where a run of it was cut short by its worker's death, never for a Redis crash
// alone. Labelled `stress`: it takes a few minutes.
#include "../integration/queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int k_jobs = 10'000;
constexpr int k_workers = 3;
// Faults come for this long at most; then the run must finish undisturbed.
constexpr auto k_chaos = 120s;
// From the start, the longest the run may take before the test calls it a hang.
constexpr auto k_deadline = 270s;

// One life of a worker: which of the three it is, and whether it was SIGKILLed. Its tag
// (GPUSCHED_CHAOS_WORKER in its environment: a job runs in its submitter's environment, but
// with its worker's GPUSCHED_* variables set over it) names it in the log.
struct Incarnation {
    std::string tag;
    std::unique_ptr<TempDir> dir;
    std::unique_ptr<Process> process;
    bool killed = false;
};

// One run of a job as its log lines tell it.
struct JobRun {
    std::string tag;
    std::string pid;
    bool ended = false;
};

// Every write on disk before Redis answers it.
class QueueChaos : public ::testing::Test, public QueueFixture {
protected:
    QueueChaos() : QueueFixture(Store::redis, Persistence::every_write) {}
    // Its workers are killed; what they left behind goes with the fixture.
    ~QueueChaos() override
    {
        for (auto& incarnation : m_incarnations) {
            incarnation.process.reset();
        }
    }

    // Starts worker `slot` again, with the same GPUs, spool and lock directory as before.
    void start_worker_in(int slot)
    {
        const auto tag = fmt::format("w{}.{}", slot, m_lives[slot]++);
        Incarnation incarnation{tag, std::make_unique<TempDir>(), nullptr};
        const auto slot_dir = m_dir / fmt::format("worker-{}", slot);
        fs::create_directories(slot_dir / "spool");
        LaunchOptions options{{"worker", "--redis", redis().url(), "--gpus",
                               fmt::format("GPU-a{0},GPU-b{0}", slot), "--lease-timeout", "2",
                               "--spool", (slot_dir / "spool").string(), "-q"}};
        options.env["GPUSCHED_CHAOS_WORKER"] = tag;
        // Leases are host-wide: a worker started again waits for what its dead one left.
        options.env["GPUSCHED_LOCK_DIR"] = (slot_dir / "leases").string();
        incarnation.process = std::make_unique<Process>(*incarnation.dir, options);
        m_current[slot] = m_incarnations.size();
        m_incarnations.push_back(std::move(incarnation));
    }

    std::vector<Incarnation> m_incarnations;
    std::map<int, int> m_lives;
    std::map<int, std::size_t> m_current; // slot -> its live incarnation
};

TEST_F(QueueChaos, TenThousandJobsEachSucceedOnceThroughWorkerAndRedisCrashes)
{
    const auto seed = std::getenv("QUEUE_CHAOS_SEED") != nullptr
                          ? std::stoul(std::getenv("QUEUE_CHAOS_SEED"))
                          : std::random_device{}();
    std::cout << "queue chaos: seed " << seed << " (QUEUE_CHAOS_SEED)" << std::endl;
    std::mt19937 random(seed);

    const auto log = (m_dir / "log").string();
    std::vector<std::string> jobs;
    for (int id = 1; id <= k_jobs; ++id) {
        // A few jobs last a while, so that kills find jobs running.
        jobs.push_back(fmt::format("echo s-{0} $GPUSCHED_CHAOS_WORKER $$ >> {1}; {2}echo e-{0} "
                                   "$GPUSCHED_CHAOS_WORKER $$ >> {1}",
                                   id, log, id % 10 == 0 ? "sleep 0.2; " : ""));
    }
    for (int slot = 0; slot < k_workers; ++slot) {
        start_worker_in(slot);
    }
    const auto started = Clock::now();
    TempDir submit_dir;
    Process submitter(submit_dir,
                      {{"submit", "--redis", redis().url(), "--wait", "-q"}, join_lines(jobs)});

    // Redis is killed only once every job is in it: what submit does when Redis dies under it
    // is another test's concern.
    bool all_submitted = false;
    int worker_kills = 0;
    int redis_kills = 0;
    std::optional<Finished> finished;
    std::string died; // what a worker said that ended on its own
    const auto over = [&] {
        if (!finished) {
            finished = submitter.try_wait();
        }
        for (const auto& [slot, index] : m_current) {
            if (const auto ended = m_incarnations[index].process->try_wait()) {
                died += fmt::format(
                    "worker {} ended with status {}, signal {}, {:.1f} s in (submit {}):\n{}\n",
                    m_incarnations[index].tag, ended->exit_status, ended->signal,
                    std::chrono::duration<double>(Clock::now() - started).count(),
                    finished ? "had ended" : "still waited", ended->err);
            }
        }
        return finished.has_value() || !died.empty();
    };
    while (Clock::now() - started < k_chaos) {
        const auto pause =
            std::chrono::milliseconds(std::uniform_int_distribution<int>(1000, 3000)(random));
        if (eventually(over, pause)) {
            break;
        }
        if (!all_submitted) {
            const auto status = try_queue_status();
            all_submitted = status && (*status)["submitted"] == k_jobs;
        }
        const int target = std::uniform_int_distribution<int>(0, k_workers)(random);
        if (target == k_workers) {
            if (!all_submitted) {
                continue;
            }
            redis().kill();
            redis().start(); // with its data
            ++redis_kills;
        } else {
            auto& victim = m_incarnations[m_current[target]];
            victim.process->signal(SIGKILL);
            victim.process->wait();
            victim.killed = true;
            ++worker_kills;
            start_worker_in(target);
        }
    }
    const bool ended = eventually(over, std::chrono::duration_cast<std::chrono::milliseconds>(
                                            k_deadline - (Clock::now() - started)));
    if (!died.empty()) {
        for (const auto& incarnation : m_incarnations) {
            died += fmt::format("{} said:\n{}", incarnation.tag,
                                read_file(*incarnation.dir / "gpusched.err"));
        }
    }
    ASSERT_TRUE(died.empty()) << died;
    ASSERT_TRUE(ended) << "submit --wait had not ended after " << k_deadline.count()
                       << " s; it says:\n"
                       << submitter.err_so_far();
    EXPECT_EQ(finished->exit_status, 0) << finished->err;
    const auto status = try_queue_status();
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ((*status)["succeeded"], k_jobs) << status->dump();
    EXPECT_EQ((*status)["failed"], 0) << status->dump();

    // Each job's runs in the order they started, and what each run's worker suffered.
    std::map<std::string, bool> killed;
    for (const auto& incarnation : m_incarnations) {
        killed[incarnation.tag] = incarnation.killed;
    }
    std::map<int, std::vector<JobRun>> runs;
    int malformed = 0;
    int double_ends = 0;
    for (const auto& line : split_lines(read_file(log))) {
        std::istringstream fields(line);
        std::string what;
        JobRun seen;
        if (!(fields >> what >> seen.tag >> seen.pid) || what.size() < 3 ||
            killed.count(seen.tag) == 0) {
            ++malformed;
            ADD_FAILURE() << "a log line without a known worker: " << line;
            continue;
        }
        const int id = std::stoi(what.substr(2));
        auto& job = runs[id];
        if (what[0] == 's') {
            job.push_back(seen);
            continue;
        }
        auto it = std::find_if(job.begin(), job.end(), [&](const JobRun& started_run) {
            return started_run.tag == seen.tag && started_run.pid == seen.pid;
        });
        if (it == job.end()) {
            ADD_FAILURE() << "an end without a start: " << line;
        } else {
            it->ended = true;
        }
    }
    int reruns = 0;
    int unexplained = 0;
    std::string explained_none;
    for (int id = 1; id <= k_jobs; ++id) {
        const auto& job = runs[id];
        const auto ends =
            std::count_if(job.begin(), job.end(), [](const JobRun& r) { return r.ended; });
        if (ends == 0) {
            ADD_FAILURE() << "job " << id << " never ended";
        }
        double_ends += ends > 1 ? 1 : 0;
        reruns += job.empty() ? 0 : static_cast<int>(job.size()) - 1;
        // A run followed by another must have been cut short by its worker's SIGKILL (before
        // its end, or before its worker could send or spool its result).
        for (std::size_t i = 0; i + 1 < job.size(); ++i) {
            if (!killed[job[i].tag]) {
                ++unexplained;
                if (unexplained <= 20) {
                    explained_none +=
                        fmt::format("job {}: run by {} (pid {}{}) then again\n", id, job[i].tag,
                                    job[i].pid, job[i].ended ? ", ended" : "");
                }
            }
        }
    }
    std::cout << fmt::format("queue chaos: {} worker kills, {} redis kills, {} reruns ({} "
                             "without a worker kill), {} jobs ended twice, {:.0f} s",
                             worker_kills, redis_kills, reruns, unexplained, double_ends,
                             std::chrono::duration<double>(Clock::now() - started).count())
              << std::endl;
    EXPECT_EQ(unexplained, 0) << "runs repeated though no worker of theirs was killed:\n"
                              << explained_none;
    EXPECT_EQ(malformed, 0);
    EXPECT_GT(worker_kills + redis_kills, 0) << "the run ended before any fault came";
}

} // namespace
} // namespace gpusched::testing
