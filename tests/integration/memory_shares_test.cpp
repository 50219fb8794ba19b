// GPU memory shared between processes: runs, each with its own jobs that ask for memory,
// share one GPU by memory shares (lease_memory_share_name), never promising the same memory
// twice; a whole GPU's lease and memory shares exclude each other; a killed run's promises
// last as long as its jobs. Real runs, real sockets, real jobs; only the driver is fake.
#include "gpu_memory_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <optional>
#include <set>
#include <string>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

class MemoryShares : public GpuMemory {
protected:
    // A run of jobs that ask for `memory`, verbose: its log tells each look.
    Process start_run(const std::string& memory, const std::string& input)
    {
        return Process(m_dir, on_fake({"--gpus", "0", "--mem", memory, "-v"}, input));
    }
    nlohmann::json status_of_gpu() const
    {
        const auto status = run(m_dir, on_fake({"status", "--gpus", "0", "--json"}));
        const auto gpus = json_field(status.out, "gpus");
        return gpus.is_array() && !gpus.empty() ? gpus[0] : nlohmann::json();
    }
    // Waits for `looks` more looks at memory in the run's log.
    static bool looked_again(const Process& gpusched, std::size_t more = 2)
    {
        const auto seen = looks(gpusched.err_so_far());
        return eventually([&] { return looks(gpusched.err_so_far()) >= seen + more; });
    }
};

TEST_F(MemoryShares, TwoRunsShareOneGpuWhileTheirJobsFit)
{
    machine(k_one_gpu);
    Process first = start_run("30G", held_job(1));
    Process second = start_run("30G", held_job(2));
    ASSERT_TRUE(eventually([&] { return started() == 2; }))
        << first.err_so_far() << second.err_so_far();
    nlohmann::json gpu;
    ASSERT_TRUE(eventually([&] {
        gpu = status_of_gpu();
        return gpu["memory_shares"].size() == 2;
    })) << gpu;
    EXPECT_EQ(gpu["state"], "shared");
    EXPECT_EQ(gpu["memory_reserved_mib"], 61440) << gpu;
    write_file(go(), "");
    EXPECT_EQ(first.wait().exit_status, 0);
    EXPECT_EQ(second.wait().exit_status, 0);
    EXPECT_EQ(status_of_gpu()["state"], "free") << "every share went with its job";
}

// The start of a UUID (GPU-aaaa), as CUDA takes it, is the GPU it names for its memory too: its
// jobs share the GPU with a run that named it by index, and no more than fits is promised.
TEST_F(MemoryShares, AGpuNamedByTheStartOfItsUuidIsSharedByMemory)
{
    if (!built_with_cuda()) {
        GTEST_SKIP() << "built without CUDA: no probe turns a UUID's start into its GPU";
    }
    machine(k_one_gpu);
    Process by_index = start_run("30G", held_job(1));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << by_index.err_so_far();
    Process by_uuid(m_dir, on_fake({"--gpus", k_first_uuid.substr(0, 12), "--mem", "30G", "-v"},
                                   held_job(2) + held_job(3)));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << by_uuid.err_so_far();
    ASSERT_TRUE(looked_again(by_uuid)) << by_uuid.err_so_far();
    EXPECT_EQ(started(), 2u) << "a third job of 30 GiB was started";
    EXPECT_EQ(status_of_gpu()["memory_shares"].size(), 2u);
    write_file(go(), "");
    EXPECT_EQ(by_index.wait().exit_status, 0);
    const auto ended = by_uuid.wait();
    EXPECT_EQ(ended.exit_status, 0) << ended.err;
    EXPECT_EQ(started(), 3u);
}

TEST_F(MemoryShares, RunsStartedTogetherNeverPromiseTheSameMemoryTwice)
{
    machine(k_one_gpu); // 78.6 GiB the driver leaves: two jobs of 30 GiB, not three
    Process first = start_run("30G", held_job(1) + held_job(2));
    Process second = start_run("30G", held_job(3) + held_job(4));
    ASSERT_TRUE(eventually([&] { return started() == 2; }))
        << first.err_so_far() << second.err_so_far();
    ASSERT_TRUE(looked_again(first) && looked_again(second));
    EXPECT_EQ(started(), 2u) << "a third job of 30 GiB started: " << read_file(log());
    write_file(go(), "");
    EXPECT_EQ(first.wait().exit_status, 0);
    EXPECT_EQ(second.wait().exit_status, 0);
    EXPECT_EQ(started(), 4u);
    EXPECT_EQ(most_at_once(), 2u) << read_file(log());
}

TEST_F(MemoryShares, AJobThatAsksForNoMemoryWaitsForTheSharesToEnd)
{
    machine(k_one_gpu);
    Process sharing = start_run("1G", held_job(1));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << sharing.err_so_far();
    Process whole(m_dir,
                  on_fake({"--gpus", "0", "-v"}, "echo start 2 >> " + log().string() +
                                                     "; echo end 2 >> " + log().string() + "\n"));
    ASSERT_TRUE(eventually([&] {
        return whole.err_so_far().find("waiting for GPU 0: a memory share of it") !=
               std::string::npos;
    })) << whole.err_so_far();
    EXPECT_EQ(started(), 1u) << "it ran beside a job that shares the GPU by memory";
    write_file(go(), "");
    EXPECT_EQ(sharing.wait().exit_status, 0);
    EXPECT_EQ(whole.wait().exit_status, 0) << whole.err_so_far();
    EXPECT_EQ(started(), 2u);
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());
}

TEST_F(MemoryShares, WhileAJobWaitsForTheGpuWholeNoNewShareIsAdmitted)
{
    machine(k_one_gpu);
    const auto queue = m_dir / "queue";
    Process sharing(m_dir, on_fake({"--gpus", "0", "--mem", "1G", "-v", "--fifo", queue.string()}));
    ASSERT_TRUE(eventually([&] { return fs::exists(queue); }));
    write_file(queue, held_job(1));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << sharing.err_so_far();
    const auto quick = [this](int number) {
        return fmt::format("echo start {0} >> {1}; echo end {0} >> {1}\n", number, log().string());
    };
    Process whole(m_dir, on_fake({"--gpus", "0"}, quick(2)));
    ASSERT_TRUE(eventually([&] {
        return whole.err_so_far().find("waiting for GPU 0: a memory share of it") !=
               std::string::npos;
    })) << whole.err_so_far();
    // Another job of 1 GiB would fit, but would keep the waiting job from the GPU.
    write_file(queue, quick(3));
    ASSERT_TRUE(looked_again(sharing, 3)) << sharing.err_so_far();
    EXPECT_EQ(started(), 1u) << read_file(log());
    write_file(go(), "");
    EXPECT_EQ(whole.wait().exit_status, 0) << whole.err_so_far();
    ASSERT_TRUE(eventually([&] { return started() == 3; })) << sharing.err_so_far();
    sharing.signal(SIGUSR1);
    EXPECT_EQ(sharing.wait().exit_status, 0);
    EXPECT_EQ(read_file(log()), "start 1\nend 1\nstart 2\nend 2\nstart 3\nend 3\n")
        << "the job that waited for the GPU whole ran first";
}

TEST_F(MemoryShares, AJobThatAsksForMemoryWaitsWhileAnotherRunHasTheGpuWhole)
{
    machine(k_one_gpu);
    Process whole(m_dir, on_fake({"--gpus", "0"}, held_job(1)));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << whole.err_so_far();
    Process sharing = start_run("1G", held_job(2));
    ASSERT_TRUE(looked_again(sharing, 3)) << sharing.err_so_far();
    EXPECT_EQ(started(), 1u) << "it shared a GPU another run has whole";
    write_file(go(), "");
    EXPECT_EQ(whole.wait().exit_status, 0);
    EXPECT_EQ(sharing.wait().exit_status, 0) << sharing.err_so_far();
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());
}

TEST_F(MemoryShares, AGpuNamedByTheStartOfItsUuidIsTheSameGpu)
{
    if (!built_with_cuda()) {
        GTEST_SKIP() << "built without CUDA: no probe turns a UUID's start into its GPU";
    }
    machine(k_one_gpu);
    const auto abbreviated = k_first_uuid.substr(0, 12); // GPU-aaaaaaaa, as CUDA takes it
    Process whole(m_dir, on_fake({"--gpus", abbreviated}, held_job(1)));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << whole.err_so_far();
    Process sharing = start_run("1G", held_job(2));
    ASSERT_TRUE(looked_again(sharing, 3)) << sharing.err_so_far();
    EXPECT_EQ(started(), 1u) << "a share beside a lease of the same GPU by another name";
    write_file(go(), "");
    EXPECT_EQ(whole.wait().exit_status, 0);
    EXPECT_EQ(sharing.wait().exit_status, 0) << sharing.err_so_far();
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());

    // Named twice, by its index and by the start of its UUID: refused, not waited for.
    const auto twice = run(m_dir, on_fake({"--gpus", abbreviated + ",0"}, "true\n"), 20s);
    EXPECT_FALSE(twice.timed_out) << "it waited for its own lease";
    EXPECT_EQ(twice.exit_status, 255) << twice.err;
    EXPECT_NE(twice.err.find(fmt::format("GPUs {} and 0 are one GPU ({}): name it once",
                                         abbreviated, k_first_uuid)),
              std::string::npos)
        << twice.err;
}

TEST_F(MemoryShares, AKilledRunsPromisesLastUntilItsJobsEnd)
{
    machine(k_one_gpu);
    // The run guard stops a killed run's jobs; this one ignores SIGTERM and runs on.
    Process killed = start_run("50G", held_job(1, "trap '' TERM; "));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << killed.err_so_far();
    killed.signal(SIGKILL);
    killed.wait();
    // Its job runs on, unwatched: its 50 GiB are still promised.
    Process next = start_run("50G", held_job(2));
    ASSERT_TRUE(looked_again(next, 3)) << next.err_so_far();
    EXPECT_EQ(started(), 1u) << "50 GiB promised twice on a GPU of 78";
    EXPECT_EQ(status_of_gpu()["memory_shares"].size(), 1u) << status_of_gpu();
    write_file(go(), ""); // the orphaned job ends, and with it its share
    EXPECT_EQ(next.wait().exit_status, 0) << next.err_so_far();
    EXPECT_EQ(started(), 2u);
    EXPECT_EQ(most_at_once(), 1u) << read_file(log());
}

TEST_F(MemoryShares, AJobUsingMoreThanItAskedLeavesItsSiblingsPromiseStanding)
{
    machine(k_one_gpu); // 81559 MiB, 1000 of them the driver's
    // Two jobs of 30 GiB; the second allocates 40000 MiB, the first nothing yet.
    const auto allocated = m_dir / "allocated";
    Process sharing = start_run(
        "30G",
        held_job(1) + held_job(2, fmt::format("echo 'process 0 '$$' 40000' >> {}; touch {}; ",
                                              (m_dir / "machine").string(), allocated.string())));
    ASSERT_TRUE(eventually([&] { return started() == 2 && fs::exists(allocated); }))
        << sharing.err_so_far();
    // 1000 + 40000 in use, and job 1's 30720 still promised: 9839 MiB left, too few for 18 GiB
    // (where its sibling's use was netted against job 1's promise, 19119 MiB seemed left).
    Process next = start_run("18G", held_job(3));
    ASSERT_TRUE(looked_again(next, 3)) << next.err_so_far();
    EXPECT_EQ(started(), 2u) << read_file(log());
    write_file(go(), "");
    EXPECT_EQ(sharing.wait().exit_status, 0);
    EXPECT_EQ(next.wait().exit_status, 0) << next.err_so_far();
}

TEST_F(MemoryShares, AGpuschedInsideAJobWithAShareRunsWithinItsPromise)
{
    machine(k_one_gpu);
    // Inside a job promised 40 GiB of 78.6, 40 GiB more for its own jobs is that promise,
    // not another: it starts at once rather than wait for its own parent.
    const auto inner = m_dir / "inner.txt";
    write_file(inner, "echo inner ran >> " + log().string() + "\n");
    const auto nested =
        run(m_dir,
            on_fake({"--gpus", "0", "--mem", "40G"},
                    fmt::format("{} --gpus 0 --mem 40G {}\n", binary().string(), inner.string())),
            30s);
    EXPECT_EQ(nested.exit_status, 0) << nested.err;
    EXPECT_EQ(read_file(log()), "inner ran\n") << nested.err;
    const auto execs = run(m_dir,
                           on_fake({"exec", "--gpus", "0", "--mem", "40G", "--", binary().string(),
                                    "exec", "--gpus", "0", "--mem", "40G", "--", "echo", "hi"}),
                           30s);
    EXPECT_EQ(execs.exit_status, 0) << execs.err;
    EXPECT_EQ(execs.out, "hi\n") << execs.err;
}

TEST_F(MemoryShares, ExecWithMemSharesAGpuWithARunsJobsAndCountsTheirPromises)
{
    machine(k_one_gpu);
    Process sharing = start_run("40G", held_job(1));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << sharing.err_so_far();
    // 78.6 GiB less the run's 40 promised: 30 GiB fit beside it, 40 do not.
    const auto beside = run(m_dir, on_fake({"exec", "--gpus", "0", "--mem", "30G", "--", "sh", "-c",
                                            "echo $CUDA_VISIBLE_DEVICES"}));
    EXPECT_EQ(beside.exit_status, 0) << beside.err;
    EXPECT_EQ(beside.out, "0\n") << beside.err;
    const auto refused =
        run(m_dir, on_fake({"exec", "--gpus", "0", "--mem", "40G", "--no-wait", "--", "true"}));
    EXPECT_EQ(refused.exit_status, 75) << refused.err;
    EXPECT_NE(refused.err.find("not 1 GPU with 40 GiB of memory free"), std::string::npos)
        << refused.err;
    // While it runs, the command holds its share, and the run's next job counts it.
    const auto marker = m_dir / "exec-running";
    Process holding(m_dir, on_fake({"exec", "--gpus", "0", "--mem", "30G", "--", "sh", "-c",
                                    "touch " + marker.string() + "; while [ ! -e " + go().string() +
                                        " ]; do sleep 0.05; done"}));
    ASSERT_TRUE(eventually([&] { return fs::exists(marker); })) << holding.err_so_far();
    nlohmann::json gpu;
    ASSERT_TRUE(eventually([&] {
        gpu = status_of_gpu();
        return gpu["memory_shares"].size() == 2;
    })) << gpu;
    EXPECT_EQ(gpu["memory_reserved_mib"], 71680) << gpu;
    const auto whole = run(m_dir, on_fake({"exec", "--gpus", "0", "--no-wait", "--", "true"}));
    EXPECT_EQ(whole.exit_status, 75) << "leased whole beside memory shares: " << whole.err;
    write_file(go(), "");
    EXPECT_EQ(holding.wait().exit_status, 0);
    EXPECT_EQ(sharing.wait().exit_status, 0);
}

// A second account shares the GPU: its runs' jobs and ours pack it by memory alike.
class MemorySharesOfTwoUsers : public MemoryShares {
protected:
    void SetUp() override
    {
        MemoryShares::SetUp();
        m_user = second_user();
        if (!m_user) {
            GTEST_SKIP() << "needs root, to run gpusched as a second user";
        }
        open_to_everyone(m_dir.path());
        write_file(log(), "");
        fs::permissions(log(), fs::perms::all & ~(fs::perms::owner_exec | fs::perms::group_exec |
                                                  fs::perms::others_exec));
    }
    // A run of the second user's, with the fake driver where that user can load it.
    Process start_their_run(const std::string& memory, const std::string& input)
    {
        auto options = on_fake({"--gpus", "0", "--mem", memory, "-v"}, input);
        fs::path copies;
        // The fake libcuda.so.1 is built only where the CUDA toolkit is.
        for (const char* library : {"libcuda.so.1", "libnvidia-ml.so.1"}) {
            if (fs::exists(k_fake_driver / library)) {
                copies = reachable_by_others(k_fake_driver / library).parent_path();
            }
        }
        options.env["LD_LIBRARY_PATH"] = copies.string();
        return Process(m_dir, as_user(*m_user, std::move(options)));
    }

    std::optional<std::string> m_user;
};

TEST_F(MemorySharesOfTwoUsers, NeitherPromisesWhatTheOtherWasPromised)
{
    machine(k_one_gpu); // 78.6 GiB the driver leaves
    Process ours = start_run("40G", held_job(1));
    ASSERT_TRUE(eventually([&] { return started() == 1; })) << ours.err_so_far();
    Process theirs = start_their_run("30G", held_job(2));
    ASSERT_TRUE(eventually([&] { return started() == 2; })) << theirs.err_so_far();
    // 10 GiB more would be more than the GPU has, whoever asks.
    Process more = start_their_run("10G", held_job(3));
    ASSERT_TRUE(looked_again(more, 3)) << more.err_so_far();
    EXPECT_EQ(started(), 2u) << read_file(log());
    nlohmann::json gpu;
    ASSERT_TRUE(eventually([&] {
        gpu = status_of_gpu();
        return gpu["memory_shares"].size() == 2;
    })) << gpu;
    std::set<std::string> users;
    for (const auto& holder : gpu["memory_shares"]) {
        users.insert(holder["user"].get<std::string>());
    }
    EXPECT_EQ(users, (std::set<std::string>{"root", *m_user})) << gpu;
    write_file(go(), "");
    EXPECT_EQ(ours.wait().exit_status, 0);
    EXPECT_EQ(theirs.wait().exit_status, 0) << theirs.err_so_far();
    EXPECT_EQ(more.wait().exit_status, 0) << more.err_so_far();
    EXPECT_EQ(started(), 3u);
}

} // namespace
} // namespace gpusched::testing
