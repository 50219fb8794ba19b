// Inputs: files in order, stdin, pipes, and named pipes used as live queues.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

std::string touch_command(const TempDir& dir, const std::string& name)
{
    return fmt::format("echo \"$GPUSCHED_JOB_ID\" > {}", (dir / name).string());
}

// Opens a named pipe for writing, writes, and closes it: one writer's whole visit.
void write_to_fifo(const fs::path& fifo, const std::string& text)
{
    const int fd = open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << "open " << fifo;
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
}

TEST(Input, FilesAreReadInOrderWithStdinForDash)
{
    TempDir dir;
    write_file(dir / "first.txt", touch_command(dir, "a") + "\n");
    write_file(dir / "last.txt", touch_command(dir, "c") + "\n");
    const auto result = run(dir, {{"--gpus", "0", "-q", "--", (dir / "first.txt").string(), "-",
                                   (dir / "last.txt").string()},
                                  touch_command(dir, "b") + "\n"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "a"), "1\n");
    EXPECT_EQ(read_file(dir / "b"), "2\n");
    EXPECT_EQ(read_file(dir / "c"), "3\n");
}

TEST(Input, LineRulesApply)
{
    TempDir dir;
    const std::string input = "# a comment\n\n   \necho one \\\n  two > " +
                              (dir / "joined").string() + "\r\n  # indented comment\n" +
                              touch_command(dir, "last") + "\n";
    const auto result = run(dir, {{"--gpus", "0"}, input});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "joined"), "one two\n");
    EXPECT_EQ(read_file(dir / "last"), "2\n");
    EXPECT_NE(result.err.find("2 jobs: 2 succeeded, 0 failed"), std::string::npos) << result.err;
}

TEST(Input, AFileNamedLikeASubcommandIsReadAsAFile)
{
    TempDir dir;
    write_file(dir / "report", "echo from-the-file\n");
    LaunchOptions after_gpus{{"--gpus", "0", "report"}};
    after_gpus.cwd = dir.path();
    const auto result = run(dir, after_gpus);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, "from-the-file\n");
    LaunchOptions after_dashes{{"--gpus", "0", "--", "report"}};
    after_dashes.cwd = dir.path();
    EXPECT_EQ(run(dir, after_dashes).out, "from-the-file\n");
}

TEST(Input, MissingFileIsAUsageErrorNamingIt)
{
    TempDir dir;
    const auto result = run(dir, {{"--gpus", "0", (dir / "nope.txt").string()}});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("nope.txt"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("No such file"), std::string::npos) << result.err;
}

TEST(Input, PipeLinesRunAsTheyArrive)
{
    TempDir dir;
    int ends[2];
    ASSERT_EQ(pipe2(ends, O_CLOEXEC), 0);
    Process gpusched(dir, {{"--gpus", "0"},
                           std::nullopt,
                           fs::path(fmt::format("/proc/{}/fd/{}", getpid(), ends[0]))});
    close(ends[0]);
    const auto line = touch_command(dir, "first") + "\n";
    ASSERT_EQ(write(ends[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
    // The pipe is still open: the job must start now, not at end of input.
    EXPECT_TRUE(eventually([&] { return read_file(dir / "first") == "1\n"; }));
    close(ends[1]);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

TEST(Input, NamedPipeIsALiveQueueForSuccessiveWriters)
{
    TempDir dir;
    const auto fifo = dir / "queue";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Process gpusched(dir, {{"--gpus", "0,1", "--", fifo.string()}});
    write_to_fifo(fifo, touch_command(dir, "w1a") + "\n" + touch_command(dir, "w1b") + "\n");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "w1a") && fs::exists(dir / "w1b"); }));
    // The first writer has closed the FIFO; the scheduler must still be there for the next.
    write_to_fifo(fifo, touch_command(dir, "w2"));
    write_to_fifo(fifo, "\n" + touch_command(dir, "w3") + "\n");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "w2") && fs::exists(dir / "w3"); }));
    EXPECT_TRUE(process_exists(gpusched.pid()));
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "w3"), "4\n");
}

TEST(Input, FifoOptionCreatesTheQueue)
{
    TempDir dir;
    const auto fifo = dir / "created.fifo";
    Process gpusched(dir, {{"--gpus", "0", "--fifo", fifo.string()}});
    ASSERT_TRUE(eventually([&] { return fs::is_fifo(fifo); }));
    EXPECT_EQ(fs::status(fifo).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << "others must not be able to queue commands";
    write_to_fifo(fifo, touch_command(dir, "one") + "\n");
    write_to_fifo(fifo, touch_command(dir, "two") + "\n");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "two"); }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
}

TEST(Input, FifoOptionRefusesAnExistingFile)
{
    TempDir dir;
    write_file(dir / "plain", "");
    const auto result = run(dir, {{"--gpus", "0", "--fifo", (dir / "plain").string()}});
    EXPECT_EQ(result.exit_status, 255);
    EXPECT_NE(result.err.find("is not a FIFO"), std::string::npos) << result.err;
}

TEST(Input, NamedPipeAsStdinIsALiveQueue)
{
    TempDir dir;
    const auto fifo = dir / "stdin.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    // As in a shell, opening the FIFO as stdin waits for a writer: hold one while starting.
    const int starter = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(starter, 0);
    Process gpusched(dir, {{"--gpus", "0"}, std::nullopt, fifo});
    close(starter);
    write_to_fifo(fifo, touch_command(dir, "a") + "\n");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "a"); }));
    write_to_fifo(fifo, touch_command(dir, "b") + "\n");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "b"); }));
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait(20s);
    EXPECT_EQ(result.exit_status, 0) << result.err;
}

} // namespace
} // namespace gpusched::testing
