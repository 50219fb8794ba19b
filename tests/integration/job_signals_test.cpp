// Jobs start with every signal at its default action and none blocked, whatever gpusched was
// started with: a shell script's `cmd &` starts it with SIGINT and SIGQUIT ignored (POSIX),
// and gpusched itself ignores SIGPIPE and blocks the signals it reads.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// A mask of /proc/PID/status (SigIgn, SigBlk), from the lines a job printed; ~0 when absent.
// The C library's own signals, between 31 and SIGRTMIN, are left out: it ignores them in
// every child posix_spawn makes, and no program may use them.
unsigned long long status_mask(const std::string& status, const std::string& field)
{
    const auto at = status.find(field + ":");
    if (at == std::string::npos) {
        return ~0ULL;
    }
    auto mask = std::strtoull(status.c_str() + at + field.size() + 1, nullptr, 16);
    for (int signal = 32; signal < SIGRTMIN; ++signal) {
        mask &= ~(1ULL << (signal - 1));
    }
    return mask;
}

// `gpusched ARGS` started as a script starts a program with `&`, with SIGPIPE ignored too.
// The script writes gpusched's pid to DIR/pid, so that a stop goes to gpusched as a user's
// would.
LaunchOptions from_a_script(const TempDir& dir, const std::vector<std::string>& args)
{
    std::vector<std::string> shell_args = {
        "-c", "trap '' PIPE; \"$0\" \"$@\" & echo $! > \"$GPUSCHED_TEST_PID\"; wait $!",
        binary().string()};
    shell_args.insert(shell_args.end(), args.begin(), args.end());
    LaunchOptions options{shell_args};
    options.program = "/bin/bash";
    options.env["GPUSCHED_TEST_PID"] = (dir / "pid").string();
    return options;
}

pid_t started_pid(const TempDir& dir)
{
    std::string pid;
    eventually([&] { return !(pid = read_file(dir / "pid")).empty() && pid.back() == '\n'; });
    return std::stoi(pid);
}

constexpr const char* k_print_signals = "grep -E '^Sig(Ign|Blk):' /proc/self/status";

void expect_default_signals(const Finished& result)
{
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(status_mask(result.out, "SigIgn"), 0u) << result.out;
    EXPECT_EQ(status_mask(result.out, "SigBlk"), 0u) << result.out;
}

TEST(JobSignals, ARunsJobsStartWithDefaultSignals)
{
    TempDir dir;
    write_file(dir / "jobs", std::string(k_print_signals) + "\n");
    expect_default_signals(run(dir, from_a_script(dir, {"--gpus", "0", (dir / "jobs").string()})));
}

TEST(JobSignals, AnExecsCommandStartsWithDefaultSignals)
{
    TempDir dir;
    expect_default_signals(run(dir, from_a_script(dir, {"exec", "--gpus", "0", "--", "grep", "-E",
                                                        "^Sig(Ign|Blk):", "/proc/self/status"})));
}

TEST(JobSignals, AWorkersJobsStartWithDefaultSignals)
{
    TempDir dir;
    const auto db = (dir / "queue.db").string();
    ASSERT_EQ(run(dir, {{"submit", "--db", db, "--no-start", "--", k_print_signals}}).exit_status,
              0);
    Process worker(dir, from_a_script(dir, {"worker", "--db", db, "--gpus", "0"}));
    ASSERT_TRUE(eventually([&] {
        const auto out = run(dir, {{"logs", "--db", db, "1"}}).out;
        return out.find("SigBlk:") != std::string::npos;
    }));
    const auto logs = run(dir, {{"logs", "--db", db, "1"}});
    EXPECT_EQ(status_mask(logs.out, "SigIgn"), 0u) << logs.out;
    EXPECT_EQ(status_mask(logs.out, "SigBlk"), 0u) << logs.out;
    ::kill(started_pid(dir), SIGTERM);
    EXPECT_FALSE(worker.wait(20s).timed_out);
}

// What the default dispositions are for: a job that saves a checkpoint on SIGINT gets the
// SIGINT of a stop, though gpusched was started where SIGINT is ignored.
TEST(JobSignals, AJobStartedFromAScriptSeesTheStopsSigint)
{
    TempDir dir;
    const auto saved = dir / "saved";
    const auto started = dir / "started";
    write_file(dir / "jobs", "trap 'echo saved > " + saved.string() + "; exit 0' INT; touch " +
                                 started.string() + "; while :; do sleep 0.05; done\n");
    Process script(
        dir, from_a_script(dir, {"--gpus", "0", "--kill-after", "60", (dir / "jobs").string()}));
    ASSERT_TRUE(eventually([&] { return fs::exists(started); }));
    ::kill(started_pid(dir), SIGINT);
    const auto result = script.wait(30s);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(read_file(saved), "saved\n") << "the job never saw the SIGINT: " << result.err;
}

} // namespace
} // namespace gpusched::testing
