// Bad command lines fail with a message and exit status 255, before anything runs; the
// message starts with the name gpusched was called by, and says what was probably meant.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// gpusched under another name (as installed: simple_gpu_scheduler, simple_hypersearch).
fs::path linked_as(const TempDir& dir, const std::string& name)
{
    const auto link = dir / name;
    fs::create_symlink(binary(), link);
    return link;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& message,
                        std::map<std::string, std::optional<std::string>> env = {})
{
    TempDir dir;
    const auto result = run(dir, {args, "true\n", std::nullopt, std::move(env)});
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    EXPECT_EQ(result.err.rfind("gpusched: error: ", 0), 0u) << result.err;
}

TEST(Usage, DuplicateGpu)
{
    expect_usage_error({"--gpus", "0", "1", "0"}, "GPU '0' is listed twice");
}

TEST(Usage, EmptyGpuEntry)
{
    expect_usage_error({"--gpus", "0,"}, "empty GPU id in '--gpus 0,'");
}

TEST(Usage, GpusWithoutValue)
{
    expect_usage_error({"--gpus"}, "--gpus");
}

TEST(Usage, EmptyVisibleDevices)
{
    expect_usage_error({}, "CUDA_VISIBLE_DEVICES is set but empty", {{"CUDA_VISIBLE_DEVICES", ""}});
}

TEST(Usage, NoGpuSaysHowToPassGpus)
{
    if (fs::exists("/dev/nvidiactl")) {
        GTEST_SKIP() << "this machine has an NVIDIA driver; discovery is checked by the gpu tests";
    }
    expect_usage_error({}, "name the GPUs to use with --gpus",
                       {{"CUDA_VISIBLE_DEVICES", std::nullopt}});
}

TEST(Usage, UnknownOption)
{
    expect_usage_error({"--gpus", "0", "--frobnicate"},
                       "gpusched: error: unknown option --frobnicate");
}

TEST(Usage, AUsageErrorIsNeverACountOfFailedJobs)
{
    TempDir dir;
    const auto two_failed = run(dir, {{"--gpus", "0"}, "exit 3\ntrue\nfalse\n"});
    EXPECT_EQ(two_failed.exit_status, 2) << two_failed.err;
    const auto usage = run(dir, {{"--gpus", "0", "--gpus-per-job", "2"}, "true\n"});
    EXPECT_EQ(usage.exit_status, 255) << usage.err;
    const auto missing_file = run(dir, {{"--gpus", "0", (dir / "missing.txt").string()}});
    EXPECT_EQ(missing_file.exit_status, 255) << missing_file.err;
    EXPECT_EQ(run(dir, {{"exec"}}).exit_status, 255) << "exec without a command";
    EXPECT_EQ(run(dir, {{"exec", "--gpus", "0", "--", "sh", "-c", "exit 2"}}).exit_status, 2)
        << "exec exits with its command's status";
}

TEST(Usage, ErrorsStartWithTheNameGpuschedWasCalledBy)
{
    TempDir dir;
    const auto scheduler = run(dir, {{"--gpus", "0", "--frobnicate"},
                                     "true\n",
                                     std::nullopt,
                                     {},
                                     linked_as(dir, "simple_gpu_scheduler")});
    EXPECT_EQ(scheduler.exit_status, 255);
    EXPECT_EQ(scheduler.err.rfind("simple_gpu_scheduler: error: unknown option --frobnicate", 0),
              0u)
        << scheduler.err;
    const auto bad_value = run(dir, {{"--gpus", "0", "--timeout", "5x"},
                                     "true\n",
                                     std::nullopt,
                                     {},
                                     dir / "simple_gpu_scheduler"});
    EXPECT_EQ(bad_value.err.rfind("simple_gpu_scheduler: error: --timeout: '5x' is not a "
                                  "duration (use 30s, 90m, 1h or 2d)",
                                  0),
              0u)
        << bad_value.err;
    const auto generator = run(dir, {{"echo {x}", "-p", "x", "1", "--seed", "x"},
                                     std::nullopt,
                                     std::nullopt,
                                     {},
                                     linked_as(dir, "simple_hypersearch")});
    EXPECT_EQ(generator.exit_status, 255);
    EXPECT_EQ(generator.err.rfind("simple_hypersearch: error: --seed", 0), 0u) << generator.err;
    EXPECT_TRUE(has(generator.err, "Run 'simple_hypersearch --help'")) << generator.err;
    const auto subcommand = run(dir, {{"hypersearch", "echo {x}", "--sed", "1", "-p", "x", "1"}});
    EXPECT_TRUE(has(subcommand.err, "gpusched: error: unknown option --sed (did you mean "
                                    "--seed?)\nRun 'gpusched hypersearch --help'"))
        << subcommand.err;
    const auto late = run(dir, {{"--gpus", "0", (dir / "missing.txt").string()},
                                std::nullopt,
                                std::nullopt,
                                {},
                                dir / "simple_gpu_scheduler"});
    EXPECT_EQ(late.err.rfind("simple_gpu_scheduler: error: ", 0), 0u)
        << "an error found after parsing too: " << late.err;
}

TEST(Usage, AnUnknownOptionOrSubcommandSuggestsTheNearest)
{
    expect_usage_error({"--gpu", "0"},
                       "gpusched: error: unknown option --gpu (did you mean --gpus?)");
    expect_usage_error({"--gpus", "0", "--job-log", "x"},
                       "unknown option --job-log (did you mean --joblog?)");
    expect_usage_error({"--gpus", "0", "--timeuot=5"},
                       "unknown option --timeuot (did you mean --timeout?)");
    expect_usage_error({"status", "--jsno"},
                       "unknown option --jsno for status (did you mean --json?)");
    expect_usage_error({"staus"}, "'staus' is neither a command file nor a subcommand (did you "
                                  "mean gpusched status?)");
    expect_usage_error({"sumbit", "--redis", "redis://localhost"}, "did you mean gpusched submit?");

    // A file of that name is a file: only a name that is nothing else is taken for a slip.
    TempDir dir;
    write_file(dir / "staus", "echo from the file\n");
    const auto file = run(
        dir, {{"staus", "--gpus", "0"}, std::nullopt, std::nullopt, {}, std::nullopt, dir.path()});
    EXPECT_EQ(file.exit_status, 0) << file.err;
    EXPECT_EQ(file.out, "from the file\n");
}

TEST(Usage, ACommandReadAsOptionsIsToldToComeAfterDashDash)
{
    // A run reads commands from files: a command on the command line belongs to exec.
    expect_usage_error({"--gpus", "0", "python3", "-c", "print(1)"},
                       "unknown option -c: gpusched runs the commands of FILEs (or stdin); to run "
                       "one command on a free GPU, put `exec` first and -- before the command: "
                       "gpusched exec [OPTIONS] -- COMMAND ARGS...");
    expect_usage_error({"exec", "--gpus", "0", "-x", "python3"},
                       "unknown option -x for exec: if it belongs to the command, put -- before "
                       "the command: gpusched exec [OPTIONS] -- COMMAND ARGS...");
    // Where the ids end, the command begins, options and all.
    TempDir dir;
    const auto exec = run(dir, {{"exec", "--gpus", "0", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"}});
    EXPECT_EQ(exec.exit_status, 0) << exec.err;
    EXPECT_EQ(exec.out, "0\n");
}

TEST(Usage, TheHypersearchTemplateMayComeAfterTheParameters)
{
    TempDir dir;
    const auto after = run(dir, {{"hypersearch", "-p", "lr", "0.1", "0.01", "echo --lr {lr}",
                                  "--sampling-mode", "grid"}});
    EXPECT_EQ(after.exit_status, 0) << after.err;
    EXPECT_EQ(after.out, "echo --lr 0.1\necho --lr 0.01\n");
    const auto between = run(dir, {{"hypersearch", "-p", "a", "1", "2", "echo {a} {b}", "-p", "b",
                                    "x", "--sampling-mode", "grid"}});
    EXPECT_EQ(between.exit_status, 0) << between.err;
    EXPECT_EQ(between.out, "echo 1 x\necho 2 x\n");
    const auto missing = run(dir, {{"hypersearch", "-p", "lr", "0.1", "0.01"}});
    EXPECT_EQ(missing.exit_status, 255);
    EXPECT_TRUE(has(missing.err, "gpusched: error: no command template: it comes first, then the "
                                 "parameters: gpusched hypersearch 'python train.py --lr {lr}' "
                                 "-p lr 0.1 0.01"))
        << missing.err;
}

TEST(Usage, RelativeShell)
{
    expect_usage_error({"--gpus", "0", "--shell", "sh"}, "--shell sh");
}

TEST(Usage, NegativeKillAfter)
{
    expect_usage_error({"--gpus", "0", "--kill-after", "-1"}, "kill-after");
}

TEST(GpusCommand, ListsThePoolAsJsonAndSaysWhatIsUnknown)
{
    TempDir dir;
    const auto result = run(dir, {{"gpus", "--gpus", "0,GPU-8e6b", "--json"}});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.out.find("\"id\": \"0\""), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("\"id\": \"GPU-8e6b\""), std::string::npos) << result.out;
    if (!fs::exists("/dev/nvidiactl")) {
        EXPECT_NE(result.out.find("\"processes\": null"), std::string::npos) << result.out;
        EXPECT_NE(result.err.find("memory use and processes unknown"), std::string::npos)
            << result.err;
    }
    const auto table = run(dir, {{"gpus", "--gpus", "3"}});
    EXPECT_EQ(table.exit_status, 0);
    EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
}

TEST(Usage, HelpAndVersionSucceed)
{
    TempDir dir;
    const auto help = run(dir, {{"--help"}});
    EXPECT_EQ(help.exit_status, 0);
    EXPECT_NE(help.out.find("--gpus"), std::string::npos);
    EXPECT_EQ(help.out.find("__probe-cuda"), std::string::npos) << "the probe is internal";
    const auto version = run(dir, {{"--version"}});
    EXPECT_EQ(version.exit_status, 0);
    EXPECT_EQ(version.out.rfind("gpusched ", 0), 0u) << version.out;
}

} // namespace
} // namespace gpusched::testing
