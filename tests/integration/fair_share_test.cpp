// Sharing a server fairly: runs hand a GPU someone waits for over at their job boundaries, by
// the fair-share rule, to runs and `gpusched exec`s of the same user or another (a second
// account, through runuser). Each job appends its GPU and times to the test's record of runs;
// the tests read who had which GPU when.
#include "leases_fixture.hpp"

#include <gpusched/lease_names.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <csignal>
#include <memory>
#include <sstream>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// One record per GPU of a job that had several ("0,2"), for `overlaps`.
std::vector<JobRecord> per_gpu(const std::vector<JobRecord>& records)
{
    std::vector<JobRecord> split;
    for (const auto& record : records) {
        std::istringstream gpus(record.gpu);
        for (std::string gpu; std::getline(gpus, gpu, ',');) {
            auto one = record;
            one.gpu = gpu;
            split.push_back(one);
        }
    }
    return split;
}

std::vector<JobRecord> tagged(const std::vector<JobRecord>& records, const std::string& tag)
{
    std::vector<JobRecord> found;
    std::copy_if(records.begin(), records.end(), std::back_inserter(found),
                 [&](const JobRecord& record) { return record.tag == tag; });
    return found;
}

// GPU-seconds of `records` (one GPU each) within [from, to].
double gpu_time(const std::vector<JobRecord>& records, double from, double to)
{
    double total = 0;
    for (const auto& record : records) {
        total += std::max(0.0, std::min(record.end, to) - std::max(record.start, from));
    }
    return total;
}

double last_end(const std::vector<JobRecord>& records)
{
    double last = 0;
    for (const auto& record : records) {
        last = std::max(last, record.end);
    }
    return last;
}

// The GPU time of the jobs tagged "second" over that of those tagged "first", from `arrived`
// (when the second run came) until the first of the two runs ended: while both wanted GPUs.
double second_over_first(const std::vector<JobRecord>& records, double arrived)
{
    const auto firsts = tagged(records, "first");
    const auto seconds = tagged(records, "second");
    const double until = std::min(last_end(firsts), last_end(seconds));
    return gpu_time(seconds, arrived, until) / gpu_time(firsts, arrived, until);
}

using FairShare = Leases;
using FairShareOfTwoUsers = LeasesOfTwoUsers;

// The scenario of the issue: alice runs a sweep on GPUs 0-3, bob asks for two GPUs a moment
// later. He gets them at her next job boundaries, not after her whole sweep.
TEST_F(FairShareOfTwoUsers, AnExecGetsItsGpusAtTheRunsNextJobBoundaries)
{
    constexpr double k_job = 1.5;
    Process alice(m_dir, sharing({"--gpus", "0,1,2,3"}, sweep(12, k_job, "alice")));
    ASSERT_TRUE(eventually([&] { return started("alice"); }));
    std::this_thread::sleep_for(300ms);
    TempDir bob_dir;
    Process bob_process(bob_dir, as_user(*m_user, sharing({"exec", "-n", "2", "--gpus", "0,1,2,3",
                                                           "--", "sh", "-c", job(0.5, "bob")})));
    // He arrives when he waits (`status` lists him), not when his process starts, which a
    // slow machine makes late.
    double arrived = 0;
    eventually([&] {
        if (run(m_dir, sharing({"status", "--gpus", "0", "1", "2", "3"})).out.find("waiting:") !=
            std::string::npos) {
            arrived = now_seconds();
            return true;
        }
        return !bob_process.running() || !tagged(records(), "bob").empty();
    });
    const auto bob = bob_process.wait();
    EXPECT_EQ(bob.exit_status, 0) << bob.err;
    const auto alice_done = alice.wait();
    EXPECT_EQ(alice_done.exit_status, 0) << alice_done.err;
    EXPECT_NE(alice_done.err.find("handed over to"), std::string::npos) << alice_done.err;

    const auto all = records();
    const auto bobs = tagged(all, "bob");
    ASSERT_EQ(bobs.size(), 1u);
    if (arrived == 0) {
        arrived = bobs[0].start; // seen running before he was seen waiting
    }
    double next_boundary = 1e300;
    for (const auto& record : tagged(all, "alice")) {
        if (record.end >= arrived) {
            next_boundary = std::min(next_boundary, record.end);
        }
    }
    EXPECT_LE(bobs[0].start, next_boundary + k_job)
        << "bob waited more than one of alice's job lengths after her next job boundary";
    EXPECT_LT(bobs[0].start, last_end(tagged(all, "alice"))) << "bob waited for the whole sweep";
    EXPECT_EQ(overlaps(per_gpu(all)), "");
    EXPECT_TRUE(leftover_processes().empty());
}

// A waiter killed while it waits leaves no trace: `status` no longer lists it, and the holder
// goes on with its jobs on its GPU, handing it to no one.
TEST_F(FairShare, AWaiterThatDiesLeavesNothingBehind)
{
    // Its first job long enough for the waiter to be seen and killed before its first
    // boundary (at which the waiter would be handed the GPU), however slow the machine.
    Process holder(m_dir, sharing({"--gpus", "0"}, join_lines({marked_job(6, "holder"),
                                                                 job(0.3, "holder"),
                                                                 job(0.3, "holder")})));
    ASSERT_TRUE(eventually([&] { return started("holder"); }));
    TempDir waiter_dir;
    Process waiter(waiter_dir, sharing({"exec", "--gpus", "0", "--", "true"}));
    const auto waiting = [&] {
        return run(m_dir, sharing({"status", "--gpus", "0"})).out;
    };
    ASSERT_TRUE(eventually([&] {
        return waiting().find(fmt::format("(pid {}) since", waiter.pid())) != std::string::npos;
    }));
    const auto shown = waiting();
    EXPECT_NE(shown.find("for 1 GPU"), std::string::npos) << shown;
    EXPECT_NE(shown.find("still queued"), std::string::npos) << shown;
    waiter.signal(SIGKILL);
    waiter.wait();
    EXPECT_EQ(waiting().find("waiting:"), std::string::npos) << waiting();
    const auto done = holder.wait();
    EXPECT_EQ(done.exit_status, 0) << done.err;
    EXPECT_EQ(done.err.find("handed over"), std::string::npos) << done.err;
    EXPECT_EQ(tagged(records(), "holder").size(), 3u);
}

// A live run whose GPU went idle let its lease go to whoever came ("anyone": no job of its own
// followed). When a command comes and it waits for that GPU again, it tells the holder its own
// GPU time, not that "anyone", and is handed the GPU at the holder's next job boundary rather
// than after the holder's whole sweep.
TEST_F(FairShare, ALiveRunThatLetItsGpuGoIsOwedItAgainLater)
{
    const auto fifo = m_dir / "live.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Process live(m_dir, sharing({"--gpus", "0", fifo.string()}));
    const int writer = open(fifo.c_str(), O_WRONLY | O_CLOEXEC); // once the run reads it
    ASSERT_GE(writer, 0);
    const auto feed = [&](const std::string& line) {
        const auto text = line + "\n";
        ASSERT_EQ(write(writer, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    };
    feed(marked_job(0.1, "early"));
    ASSERT_TRUE(eventually([&] { return !tagged(records(), "early").empty(); }));
    TempDir holder_dir;
    Process holder(holder_dir, sharing({"--gpus", "0"}, sweep(16, 0.5, "holder")));
    ASSERT_TRUE(eventually([&] { return started("holder"); }));
    feed(marked_job(0.2, "late"));
    ASSERT_TRUE(eventually([&] { return !tagged(records(), "late").empty(); }, 30s))
        << live.err_so_far();
    close(writer);
    live.signal(SIGUSR1); // a live queue ends on SIGUSR1, once what it read has run
    EXPECT_EQ(live.wait().exit_status, 0) << live.err_so_far();
    EXPECT_EQ(holder.wait().exit_status, 0);
    const auto all = records();
    const auto lates = tagged(all, "late");
    ASSERT_EQ(lates.size(), 1u);
    EXPECT_LT(lates[0].start, last_end(tagged(all, "holder")) - 2.0)
        << "the live run waited for the holder's whole sweep:\n"
        << live.err_so_far();
    EXPECT_EQ(overlaps(all), "");
}

// Two users' runs on the same two GPUs, one started a moment after the other: while both have
// jobs, each gets about half of the GPU time; the one that waits says for what.
TEST_F(FairShareOfTwoUsers, TwoRunsGetAboutEqualShares)
{
    Process first(m_dir, sharing({"--gpus", "0,1"}, sweep(16, 0.6, "first")));
    ASSERT_TRUE(eventually([&] { return started("first"); }));
    const double arrived = now_seconds();
    TempDir other;
    Process second(other, as_user(*m_user, sharing({"--gpus", "0,1"}, sweep(16, 0.6, "second"))));
    const auto second_done = second.wait();
    const auto first_done = first.wait();
    EXPECT_EQ(first_done.exit_status, 0) << first_done.err;
    EXPECT_EQ(second_done.exit_status, 0) << second_done.err;
    EXPECT_NE(second_done.err.find("waiting for GPU"), std::string::npos) << second_done.err;
    EXPECT_NE(second_done.err.find("it is leased by root ("), std::string::npos) << second_done.err;

    const auto all = records();
    const double ratio = second_over_first(all, arrived);
    EXPECT_GT(ratio, 0.5) << "second run's GPU time over the first's while both ran";
    EXPECT_LT(ratio, 2.0) << "second run's GPU time over the first's while both ran";
    EXPECT_EQ(overlaps(per_gpu(all)), "");
}

// The same with --share 2 for the second run: it gets about twice the GPU time.
TEST_F(FairShareOfTwoUsers, ShareWeighsTheGpuTime)
{
    Process first(m_dir, sharing({"--gpus", "0,1"}, sweep(24, 0.5, "first")));
    ASSERT_TRUE(eventually([&] { return started("first"); }));
    const double arrived = now_seconds();
    TempDir other;
    Process second(other, as_user(*m_user, sharing({"--gpus", "0,1", "--share", "2"},
                                                    sweep(24, 0.5, "second"))));
    const auto second_done = second.wait();
    const auto first_done = first.wait();
    EXPECT_EQ(first_done.exit_status, 0) << first_done.err;
    EXPECT_EQ(second_done.exit_status, 0) << second_done.err;

    const auto all = records();
    const double ratio = second_over_first(all, arrived);
    // About 2; wide bounds, for a loaded machine where a run's turn can come late (equal
    // shares, 1, stay well outside).
    EXPECT_GT(ratio, 1.25) << "GPU time of the run of weight 2 over that of weight 1";
    EXPECT_LT(ratio, 4.0) << "GPU time of the run of weight 2 over that of weight 1";
    EXPECT_EQ(overlaps(per_gpu(all)), "");
}

// Anyone may connect to a lease: a flood of connections that say nothing costs the holder
// no more than a few descriptors, and its jobs, under a tight descriptor limit, all run.
TEST_F(FairShare, AFloodOfConnectionsToALeaseFailsNoJob)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    TempDir run_dir;
    LaunchOptions options = sharing(
        {"-c", fmt::format("ulimit -n 48; exec {} --gpus 0 {}", binary().string(),
                           (m_dir / "jobs.txt").string())});
    options.program = "/bin/sh";
    write_file(m_dir / "jobs.txt", sweep(10, 0.3, "held"));
    Process holder(run_dir, options);
    ASSERT_TRUE(eventually([&] { return started("held"); }));
    const auto name = lease_socket_name(lease_space(leases()), "0");
    std::vector<int> connections;
    for (int i = 0; i < 300; ++i) {
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path + 1, name.data(), name.size());
        const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
        if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) {
            connections.push_back(fd);
        } else if (fd >= 0) {
            close(fd);
        }
    }
    EXPECT_GT(connections.size(), 100u) << "the flood must reach the holder";
    const auto done = holder.wait();
    for (const int fd : connections) {
        close(fd);
    }
    EXPECT_EQ(done.exit_status, 0) << done.err;
    EXPECT_EQ(tagged(records(), "held").size(), 10u);
}

// Three runs and twenty execs of one or two GPUs, all at once over four GPUs: every one runs,
// no GPU ever has two holders, no wait lasts forever, nothing is left behind.
TEST_F(FairShareOfTwoUsers, ThreeRunsAndTwentyExecsShareFourGpus)
{
    std::vector<std::unique_ptr<TempDir>> dirs;
    std::vector<std::unique_ptr<Process>> processes;
    for (int i = 0; i < 3; ++i) {
        dirs.push_back(std::make_unique<TempDir>());
        auto options = sharing({"--gpus", "0,1,2,3"}, sweep(6, 0.3, fmt::format("run{}", i)));
        processes.push_back(std::make_unique<Process>(
            *dirs.back(), i == 1 ? as_user(*m_user, options) : options));
    }
    for (int i = 0; i < 20; ++i) {
        dirs.push_back(std::make_unique<TempDir>());
        // Half of them the second user's.
        auto options = sharing({"exec", "-n", i % 2 == 0 ? "1" : "2", "--gpus", "0,1,2,3", "--",
                                "sh", "-c", job(0.2, "exec")});
        processes.push_back(std::make_unique<Process>(
            *dirs.back(), i % 4 < 2 ? as_user(*m_user, options) : options));
    }
    for (auto& process : processes) {
        const auto done = process->wait(120s);
        EXPECT_FALSE(done.timed_out);
        EXPECT_EQ(done.exit_status, 0) << done.err;
    }
    const auto all = records();
    EXPECT_EQ(tagged(all, "exec").size(), 20u);
    EXPECT_EQ(all.size(), 38u);
    EXPECT_EQ(overlaps(per_gpu(all)), "");
    EXPECT_TRUE(leftover_processes().empty());
}

} // namespace
} // namespace gpusched::testing
