// Contention between processes for shared GPU leases. No GPU may ever hold two jobs, every
// job must run once, and nothing may be left running:
// - twenty seconds for four fake GPUs: 50 `gpusched exec` clients at all times and three
//   schedulers, one of them SIGKILLed early with a job on every GPU;
// - ten seconds for three fake GPUs while the lock directory and its files are removed again
//   and again, with a second user's runs among the others where the tests run as root.
#include "../integration/harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// UUID prefixes, not GPU indices, so no CUDA probe runs for each of the hundreds of clients;
// no real GPU's UUID starts with fa4e and a number, one hopes.
const std::string k_gpus = "GPU-fa4e0,GPU-fa4e1,GPU-fa4e2,GPU-fa4e3";
constexpr int k_exec_clients = 50;
constexpr auto k_contention = 20s;
constexpr int k_jobs_per_scheduler = 25;
constexpr int k_doomed_jobs = 8;

double wall_now()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Starts each client again (`launch`) as soon as it ends, until `duration` is over, calling
// `each_turn` with the time elapsed every 10 ms; then waits for them all. Returns the stderr
// of every client that failed.
template <typename Launch, typename EachTurn>
std::vector<std::string> keep_clients_busy(std::vector<std::unique_ptr<Process>>& clients,
                                           const Launch& launch, Clock::duration duration,
                                           const EachTurn& each_turn)
{
    std::vector<std::string> failures;
    const auto start = Clock::now();
    while (Clock::now() - start < duration) {
        each_turn(Clock::now() - start);
        for (std::size_t client = 0; client < clients.size(); ++client) {
            if (const auto finished = clients[client]->try_wait()) {
                if (finished->exit_status != 0) {
                    failures.push_back(finished->err);
                }
                launch(static_cast<int>(client));
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    for (auto& client : clients) {
        const auto finished = client->wait(120s);
        if (finished.exit_status != 0) {
            failures.push_back(finished.err);
        }
    }
    return failures;
}

TEST(LeaseStress, SchedulersAndExecClientsNeverShareAGpu)
{
    adopt_orphans();
    TempDir dir;
    const auto lock_dir = (dir / "leases").string();
    const std::map<std::string, std::optional<std::string>> shared = {
        {"GPUSCHED_LOCK_DIR", lock_dir}};
    const unsigned seed = std::random_device{}();
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> length(0.02, 0.4);
    SCOPED_TRACE(fmt::format("random seed {}", seed));

    // The scheduler to be killed starts first with long jobs, so it has one on every GPU.
    TempDir doomed_dir;
    std::vector<std::string> doomed_jobs;
    for (int i = 0; i < k_doomed_jobs; ++i) {
        // They ignore the SIGTERM the run guard sends when their scheduler is killed, and so
        // hold their GPUs to their end (the guard's SIGKILL comes 10 s later).
        doomed_jobs.push_back(fmt::format("trap '' TERM; touch {}/started-$GPUSCHED_JOB_ID; {}",
                                          doomed_dir.path().string(),
                                          record_command(dir, 3, "doomed")));
    }
    Process doomed(doomed_dir, {{"--gpus", k_gpus}, join_lines(doomed_jobs), {}, shared});
    ASSERT_TRUE(eventually([&] { return fs::exists(doomed_dir / "started-4"); }))
        << doomed.err_so_far();

    std::vector<std::unique_ptr<TempDir>> scheduler_dirs;
    std::vector<std::unique_ptr<Process>> schedulers;
    for (const std::string tag : {"first", "second"}) {
        std::vector<std::string> jobs;
        for (int i = 0; i < k_jobs_per_scheduler; ++i) {
            jobs.push_back(record_command(dir, length(random), tag));
        }
        scheduler_dirs.push_back(std::make_unique<TempDir>());
        schedulers.push_back(std::make_unique<Process>(
            *scheduler_dirs.back(),
            LaunchOptions{{"--gpus", k_gpus}, join_lines(jobs), {}, shared}));
    }

    std::vector<std::unique_ptr<TempDir>> client_dirs;
    std::vector<std::unique_ptr<Process>> clients(k_exec_clients);
    int launched = 0;
    std::vector<std::string> failures;
    const auto launch = [&](int client) {
        const auto command = record_command(dir, length(random), fmt::format("exec{}", launched++));
        clients[client] = std::make_unique<Process>(
            *client_dirs[client],
            LaunchOptions{{"exec", "--gpus", k_gpus, "--", "sh", "-c", command}, {}, {}, shared});
    };
    for (int client = 0; client < k_exec_clients; ++client) {
        client_dirs.push_back(std::make_unique<TempDir>());
        launch(client);
    }

    double killed_at = 0;
    failures = keep_clients_busy(clients, launch, k_contention, [&](Clock::duration elapsed) {
        if (killed_at == 0 && elapsed > 1s) {
            doomed.signal(SIGKILL);
            killed_at = wall_now();
        }
    });
    for (auto& scheduler : schedulers) {
        const auto finished = scheduler->wait(120s);
        EXPECT_EQ(finished.exit_status, 0) << finished.err;
    }
    doomed.wait();
    EXPECT_TRUE(failures.empty()) << failures.size() << " exec clients failed, first:\n"
                                  << failures.front();

    // Orphans of the killed scheduler finish on their own time.
    int doomed_started = 0;
    while (fs::exists(doomed_dir / fmt::format("started-{}", doomed_started + 1))) {
        ++doomed_started;
    }
    const auto count_tag = [&](const std::string& tag) {
        const auto all = read_records(dir / "runs.log");
        return std::count_if(all.begin(), all.end(),
                             [&](const JobRecord& record) { return record.tag == tag; });
    };
    ASSERT_TRUE(eventually([&] { return count_tag("doomed") == doomed_started; }, 30s));
    EXPECT_TRUE(eventually([] { return leftover_processes().empty(); }, 30s))
        << "processes left running";

    const auto records = read_records(dir / "runs.log");
    EXPECT_EQ(overlaps(records), "") << "two jobs on one GPU";
    std::map<std::string, std::set<int>> job_ids;
    std::map<std::string, int> runs;
    bool orphan_outlived_its_scheduler = false;
    for (const auto& record : records) {
        job_ids[record.tag].insert(record.job_id);
        ++runs[record.tag];
        orphan_outlived_its_scheduler |= record.tag == "doomed" && record.end > killed_at;
    }
    for (const std::string tag : {"first", "second"}) {
        EXPECT_EQ(runs[tag], k_jobs_per_scheduler) << tag;
        EXPECT_EQ(job_ids[tag].size(), static_cast<std::size_t>(k_jobs_per_scheduler)) << tag;
    }
    for (int i = 0; i < launched; ++i) {
        EXPECT_EQ(runs[fmt::format("exec{}", i)], 1) << "exec client job " << i;
    }
    EXPECT_GE(doomed_started, 4);
    EXPECT_TRUE(orphan_outlived_its_scheduler)
        << "the killed scheduler had no job left running: the test proved nothing";
    RecordProperty("exec_jobs", launched);
}

// Removes the lock directory, or each file in it, again and again until stopped, as `rm -rf`
// and cleaners of old files in /tmp do; counts what it removed.
class Cleaner {
public:
    explicit Cleaner(fs::path directory)
        : m_thread([this, directory = std::move(directory)] { clean(directory); })
    {
    }
    ~Cleaner() { stop(); }
    Cleaner(const Cleaner&) = delete;
    Cleaner& operator=(const Cleaner&) = delete;

    int stop()
    {
        m_stop = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
        return m_removed;
    }

private:
    void clean(const fs::path& directory)
    {
        for (int turn = 0; !m_stop; ++turn) {
            std::error_code error;
            if (turn % 2 == 0) {
                m_removed += fs::remove_all(directory, error) > 0 ? 1 : 0;
            } else {
                for (const auto& entry : fs::directory_iterator(directory, error)) {
                    m_removed += fs::remove(entry.path(), error) ? 1 : 0;
                }
            }
            std::this_thread::sleep_for(2ms);
        }
    }

    std::atomic<bool> m_stop = false;
    std::atomic<int> m_removed = 0;
    std::thread m_thread;
};

TEST(LeaseStress, RemovingTheLockDirectoryNeverLetsTwoJobsShareAGpu)
{
    constexpr auto k_cleaning = 10s;
    constexpr int k_clients = 10;
    constexpr int k_jobs = 15;
    const std::string gpus = "GPU-fa4e5,GPU-fa4e6,GPU-fa4e7";
    adopt_orphans();
    TempDir dir;
    // The second user's jobs append to the same record of runs.
    open_to_everyone(dir.path());
    write_file(dir / "runs.log", "");
    fs::permissions(dir / "runs.log", fs::perms::owner_read | fs::perms::owner_write |
                                          fs::perms::group_read | fs::perms::group_write |
                                          fs::perms::others_read | fs::perms::others_write);
    const auto lock_dir = dir / "leases";
    const std::map<std::string, std::optional<std::string>> shared = {
        {"GPUSCHED_LOCK_DIR", lock_dir.string()}};
    const auto user = second_user();
    const auto maybe_as_second_user = [&](bool second, LaunchOptions options) {
        return second && user ? as_user(*user, std::move(options)) : options;
    };
    const unsigned seed = std::random_device{}();
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> length(0.02, 0.25);
    SCOPED_TRACE(fmt::format("random seed {}, second user: {}", seed, user.value_or("none")));

    Cleaner cleaner(lock_dir);
    std::vector<std::unique_ptr<TempDir>> scheduler_dirs;
    std::vector<std::unique_ptr<Process>> schedulers;
    const std::vector<std::string> scheduler_tags = {"first", "second", "other-user"};
    for (const auto& tag : scheduler_tags) {
        std::vector<std::string> jobs;
        for (int i = 0; i < k_jobs; ++i) {
            jobs.push_back(record_command(dir, length(random), tag));
        }
        scheduler_dirs.push_back(std::make_unique<TempDir>());
        schedulers.push_back(std::make_unique<Process>(
            *scheduler_dirs.back(),
            maybe_as_second_user(tag == "other-user",
                                 {{"--gpus", gpus}, join_lines(jobs), {}, shared})));
    }

    std::vector<std::unique_ptr<TempDir>> client_dirs;
    std::vector<std::unique_ptr<Process>> clients(k_clients);
    int launched = 0;
    std::vector<std::string> failures;
    const auto launch = [&](int client) {
        const auto command = record_command(dir, length(random), fmt::format("exec{}", launched++));
        clients[client] = std::make_unique<Process>(
            *client_dirs[client],
            maybe_as_second_user(
                client % 2 == 1,
                {{"exec", "--gpus", gpus, "--", "sh", "-c", command}, {}, {}, shared}));
    };
    for (int client = 0; client < k_clients; ++client) {
        client_dirs.push_back(std::make_unique<TempDir>());
        launch(client);
    }
    failures = keep_clients_busy(clients, launch, k_cleaning, [](Clock::duration) {});
    for (auto& scheduler : schedulers) {
        const auto finished = scheduler->wait(120s);
        EXPECT_EQ(finished.exit_status, 0) << finished.err;
        EXPECT_EQ(finished.err.find("error"), std::string::npos) << finished.err;
    }
    const int removed = cleaner.stop();
    EXPECT_TRUE(failures.empty()) << failures.size() << " exec clients failed, first:\n"
                                  << failures.front();
    EXPECT_TRUE(eventually([] { return leftover_processes().empty(); }, 30s))
        << "processes left running";

    const auto records = read_records(dir / "runs.log");
    EXPECT_EQ(overlaps(records), "") << "two jobs on one GPU";
    std::map<std::string, int> runs;
    for (const auto& record : records) {
        ++runs[record.tag];
    }
    for (const auto& tag : scheduler_tags) {
        EXPECT_EQ(runs[tag], k_jobs) << tag;
    }
    for (int i = 0; i < launched; ++i) {
        EXPECT_EQ(runs[fmt::format("exec{}", i)], 1) << "exec client job " << i;
    }
    EXPECT_GT(removed, 20) << "the cleaner hardly ran: the test proved nothing";
    RecordProperty("exec_jobs", launched);
    RecordProperty("removed", removed);
}

} // namespace
} // namespace gpusched::testing
