// A fork limit (EAGAIN from the process table) defers jobs instead of failing them. The limit
// is RLIMIT_NPROC, which root does not obey: the run goes under an account of its own. A
// limit on open files too low for a run's GPUs is named, with what to raise it to.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

namespace gpusched::testing {
namespace {

constexpr const char* k_user = "gpusched-nproc";

// The account, made once; false where it cannot be (not root, no useradd).
bool have_user()
{
    if (getpwnam(k_user) != nullptr) {
        return true;
    }
    if (geteuid() != 0) {
        return false;
    }
    const auto command =
        fmt::format("useradd --no-create-home --shell /bin/sh {} 2>/dev/null", k_user);
    return std::system(command.c_str()) == 0 && getpwnam(k_user) != nullptr;
}

TEST(ProcessLimits, AForkLimitDefersJobsInsteadOfFailingThem)
{
    if (!have_user()) {
        GTEST_SKIP() << "needs root to make the account " << k_user;
    }
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all);
    const auto ran = dir / "ran";
    std::vector<std::string> commands;
    for (int job = 1; job <= 24; ++job) {
        // One process per job: a shell that forks would fail in the job itself.
        commands.push_back(fmt::format("echo {} >> {}; exec sleep 0.2", job, ran.string()));
    }
    write_file(dir / "commands", join_lines(commands));
    // The account may have processes already (zombies nobody reaped): the limit leaves room
    // for gpusched, its guard and three jobs at most, of the eight GPUs' worth it would start.
    const auto script = fmt::format(
        "n=$(ps -u {0} --no-headers | wc -l); "
        "exec prlimit --nproc=$((n + 5)) {1} --gpus 0-7 --no-lock --retries 0 {2}/commands",
        k_user, reachable_by_others(binary()).string(), dir.path().string());
    const auto result = run(dir, {{"-u", k_user, "--", "sh", "-c", script},
                                  std::nullopt,
                                  std::nullopt,
                                  {},
                                  fs::path("/sbin/runuser"),
                                  dir.path()});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    std::map<std::string, int> counts;
    for (const auto& line : split_lines(read_file(ran))) {
        ++counts[line];
    }
    EXPECT_EQ(counts.size(), commands.size()) << result.err;
    for (const auto& [job, count] : counts) {
        EXPECT_EQ(count, 1) << "job " << job;
    }
    EXPECT_NE(result.err.find("cannot start yet"), std::string::npos)
        << "the limit was never reached: the test proves nothing\n"
        << result.err;
}

TEST(ProcessLimits, ALimitOnOpenFilesTooLowForTheGpusIsNamedWithWhatToRaiseItTo)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
    TempDir dir;
    // Eight GPUs: a job's descriptors go up to 3 + 2 * 8 + 2 = 21, above a limit of 16.
    for (const auto* locking : {"--no-lock", "--lock-dir"}) {
        std::vector<std::string> args{
            "-c", fmt::format("ulimit -n 16; exec {} --gpus 0-7 {}", binary().string(), locking)};
        if (std::string(locking) == "--lock-dir") {
            args.back() += " " + (dir / "leases").string();
        }
        LaunchOptions options{args, "true\n"};
        options.program = "/bin/sh";
        const auto result = run(dir, options);
        EXPECT_EQ(result.exit_status, 255) << locking << ": " << result.err;
        EXPECT_NE(result.err.find("the limit on open files (ulimit -n) is 16, and a run on this "
                                  "many GPUs needs descriptors up to 21: raise it to 22 or more"),
                  std::string::npos)
            << locking << ": " << result.err;
    }
}

} // namespace
} // namespace gpusched::testing
