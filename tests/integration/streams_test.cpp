// Inputs and outputs that would otherwise fill memory or stall gpusched: NUL bytes and
// endless lines in the input, jobs that print without newlines under --tag, and standard
// streams that are closed, directories, or pipes nobody reads.
#include "harness.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

// What a run may add to gpusched's own footprint, which a sanitizer build makes much larger.
constexpr long k_bounded_growth_kib = 64 * 1024;

// gpusched's peak resident memory for a run of one short job, with `args`.
long footprint_kib(const TempDir& dir, std::vector<std::string> args)
{
    args.insert(args.begin(), {"--gpus", "0"});
    return run(dir, {args, "echo\n"}).max_rss_kib;
}

// A pipe whose ends the test holds; close-on-exec, so only what is handed on gets them.
struct Pipe {
    Pipe()
    {
        std::array<int, 2> ends{};
        if (pipe2(ends.data(), O_CLOEXEC) != 0) {
            throw std::runtime_error("pipe2 failed");
        }
        read_end = ends[0];
        write_end = ends[1];
    }
    ~Pipe()
    {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;

    void close_read()
    {
        if (read_end >= 0) {
            close(std::exchange(read_end, -1));
        }
    }
    void close_write()
    {
        if (write_end >= 0) {
            close(std::exchange(write_end, -1));
        }
    }
    // The read end as a path another process can open: it gets the pipe, not a named one.
    fs::path read_path() const { return fmt::format("/proc/{}/fd/{}", getpid(), read_end); }

    int read_end = -1;
    int write_end = -1;
};

void write_all(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        const auto written = write(fd, bytes.data(), bytes.size());
        ASSERT_GT(written, 0) << std::strerror(errno);
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
}

// Everything readable now from `fd`, without waiting.
std::string read_available(int fd)
{
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    std::string text;
    std::array<char, 65536> chunk{};
    ssize_t got = 0;
    while ((got = read(fd, chunk.data(), chunk.size())) > 0) {
        text.append(chunk.data(), static_cast<std::size_t>(got));
    }
    fcntl(fd, F_SETFL, flags);
    return text;
}

// A job that waits, without polling, until the test opens `fifo` for writing and closes it.
std::string wait_for_release(const fs::path& fifo)
{
    return fmt::format("cat {} > /dev/null", fifo.string());
}

void release(const fs::path& fifo)
{
    const int fd = open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    close(fd);
}

TEST(Streams, ALineWithANulByteIsDroppedAsItStreams)
{
    TempDir dir;
    // 256 MiB of NUL bytes without a newline (a sparse file: no disk used), then a command.
    const auto input = dir / "zeros";
    {
        const int fd = open(input.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        const std::string after = "\necho after\n";
        ASSERT_EQ(pwrite(fd, after.data(), after.size(), 256L << 20),
                  static_cast<ssize_t>(after.size()));
        close(fd);
    }
    LaunchOptions options{{"--gpus", "0"}};
    options.stdin_path = input;
    const auto result = run(dir, options);
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_EQ(result.out, "after\n");
    EXPECT_NE(result.err.find("stdin:1: job 1 not run: the command contains a NUL byte"),
              std::string::npos)
        << result.err;
    EXPECT_LT(result.max_rss_kib, footprint_kib(dir, {}) + k_bounded_growth_kib)
        << "the line was kept in memory";
}

TEST(Streams, ANulByteIsReportedBeforeItsLineEnds)
{
    TempDir dir;
    Pipe input;
    LaunchOptions options{{"--gpus", "0"}};
    options.stdin_path = input.read_path();
    Process gpusched(dir, options);
    write_all(input.write_end, "echo first\n");
    write_all(input.write_end, std::string("x\0", 2) + std::string(100000, 'x'));
    EXPECT_TRUE(eventually([&] {
        return gpusched.err_so_far().find("stdin:2: job 2 not run: the command contains a NUL "
                                          "byte") != std::string::npos;
    })) << gpusched.err_so_far();
    write_all(input.write_end, "still line 2\necho third\n");
    input.close_write();
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_EQ(result.out, "first\nthird\n");
}

TEST(Streams, ACommandOverSixteenMebibytesIsRefused)
{
    TempDir dir;
    LaunchOptions options{{"--gpus", "0"}};
    options.stdin_data = ": " + std::string(17 << 20, 'x') + "\necho after\n";
    const auto result = run(dir, options);
    EXPECT_EQ(result.exit_status, 1) << result.err.substr(0, 1000);
    EXPECT_EQ(result.out, "after\n");
    EXPECT_NE(result.err.find("stdin:1: job 1 not run: the command is longer than 16 MiB"),
              std::string::npos)
        << result.err.substr(0, 1000);
}

TEST(Streams, TaggedProgressBarsAreShownAsTheyAreRedrawn)
{
    TempDir dir;
    const auto fifo = dir / "release";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const auto command = fmt::format(
        "printf '\\rstep 1\\rstep 2\\rstep 3'; {}; printf '\\rdone\\n'", wait_for_release(fifo));
    Process gpusched(dir, {{"--gpus", "0", "--tag"}, command + "\n"});
    const std::string shown = "[job 1, GPU 0] step 1\r[job 1, GPU 0] step 2\r";
    EXPECT_TRUE(eventually([&] { return read_file(dir / "gpusched.out") == shown; }))
        << "while the job runs: " << read_file(dir / "gpusched.out");
    release(fifo);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_EQ(result.out, shown + "[job 1, GPU 0] step 3\r[job 1, GPU 0] done\n");
}

TEST(Streams, TaggedOutputWithoutNewlinesGoesOutInPieces)
{
    TempDir dir;
    const auto fifo = dir / "release";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    constexpr std::size_t k_bytes = 100'000'000;
    const auto command =
        fmt::format("head -c {} /dev/zero | tr '\\0' x; {}; echo", k_bytes, wait_for_release(fifo));
    Process gpusched(dir, {{"--gpus", "0", "--tag"}, command + "\n"});
    EXPECT_TRUE(eventually([&] {
        return fs::file_size(dir / "gpusched.out") >= k_bytes - 64 * 1024;
    })) << "while the job runs: "
        << fs::file_size(dir / "gpusched.out") << " bytes";
    release(fifo);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_LT(result.max_rss_kib, footprint_kib(dir, {"--tag"}) + k_bounded_growth_kib)
        << "the partial line was kept in memory";
    const auto lines = split_lines(result.out);
    std::size_t bytes = 0;
    for (const auto& line : lines) {
        ASSERT_EQ(line.rfind("[job 1, GPU 0] ", 0), 0u) << line.substr(0, 80);
        EXPECT_LE(line.size(), 64 * 1024 + 15);
        bytes += line.size() - 15;
    }
    EXPECT_EQ(bytes, k_bytes);
}

TEST(Streams, TaggedLinesOverSixtyFourKibibytesAreCutBetweenCharacters)
{
    TempDir dir;
    // "a" then 40000 two-byte characters: 65536 bytes in would split the 32768th one.
    const auto command = "awk 'BEGIN { printf \"a\"; for (i = 0; i < 40000; i++) printf "
                         "\"\\303\\251\"; print \"\" }'";
    const auto result = run(dir, {{"--gpus", "0", "--tag"}, std::string(command) + "\n"});
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::string first = "[job 1, GPU 0] a";
    for (int i = 0; i < 32767; ++i) {
        first += "\303\251";
    }
    std::string second = "[job 1, GPU 0] ";
    for (int i = 32767; i < 40000; ++i) {
        second += "\303\251";
    }
    std::vector<std::size_t> sizes;
    for (const auto& line : split_lines(result.out)) {
        sizes.push_back(line.size());
    }
    EXPECT_TRUE(result.out == first + "\n" + second + "\n")
        << "line sizes " << fmt::format("{}", fmt::join(sizes, ", ")) << ", expected "
        << first.size() << ", " << second.size();
}

TEST(Streams, ClosedStdinIsAUsageError)
{
    TempDir dir;
    LaunchOptions options{{"--gpus", "0"}};
    options.close_stdin = true;
    const auto result = run(dir, options, 20s);
    EXPECT_FALSE(result.timed_out) << "read something else as stdin";
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_NE(result.err.find("gpusched: error: stdin is closed"), std::string::npos) << result.err;

    write_file(dir / "commands.txt", "echo from-the-file\n");
    LaunchOptions with_file{{"--gpus", "0", (dir / "commands.txt").string()}};
    with_file.close_stdin = true;
    const auto from_file = run(dir, with_file);
    EXPECT_EQ(from_file.exit_status, 0) << from_file.err;
    EXPECT_EQ(from_file.out, "from-the-file\n");
}

TEST(Streams, StdinThatIsADirectoryIsAUsageError)
{
    TempDir dir;
    LaunchOptions options{{"--gpus", "0"}};
    options.stdin_path = dir.path();
    const auto result = run(dir, options);
    EXPECT_EQ(result.exit_status, 255) << result.err;
    EXPECT_NE(result.err.find("gpusched: error: cannot read stdin: Is a directory"),
              std::string::npos)
        << result.err;
}

TEST(Streams, AClosedStderrPipeLeavesTheExitStatusToTheJobs)
{
    TempDir dir;
    Pipe err;
    err.close_read();
    LaunchOptions options{{"--gpus", "0"}, "echo one\necho two\n"};
    options.stderr_fd = err.write_end;
    const auto result = run(dir, options);
    EXPECT_EQ(result.signal, 0) << "killed by signal " << result.signal;
    EXPECT_EQ(result.exit_status, 0);
    EXPECT_EQ(result.out, "one\ntwo\n");

    LaunchOptions failing{{"--gpus", "0"}, "true\nfalse\n"};
    failing.stderr_fd = err.write_end;
    EXPECT_EQ(run(dir, failing).exit_status, 1);
}

TEST(Streams, AStderrNobodyReadsNeverStopsTheRun)
{
    TempDir dir;
    Pipe err;
    // Fill the pipe first; the write end is left blocking, as gpusched and its jobs get it.
    const int flags = fcntl(err.write_end, F_GETFL);
    fcntl(err.write_end, F_SETFL, flags | O_NONBLOCK);
    const std::string block(4096, '.');
    while (write(err.write_end, block.data(), block.size()) > 0) {
    }
    fcntl(err.write_end, F_SETFL, flags);

    std::string input;
    for (int job = 1; job <= 5; ++job) {
        input += fmt::format("touch {}\n", (dir / fmt::format("done{}", job)).string());
    }
    input += "sleep 600\n";
    LaunchOptions options{{"--gpus", "0"}, input};
    options.stderr_fd = err.write_end;
    Process gpusched(dir, options);
    EXPECT_TRUE(eventually([&] { return fs::exists(dir / "done5"); }))
        << "jobs stopped while the log could not be written";

    // Room for the log again; what gpusched writes while this drains is kept too.
    const auto while_draining = read_available(err.read_end);
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait(20s);
    EXPECT_FALSE(result.timed_out) << "SIGTERM was not handled";
    EXPECT_EQ(result.exit_status, 143);
    const auto log = while_draining + read_available(err.read_end);
    EXPECT_NE(log.find("log lines dropped: stderr was not being read"), std::string::npos) << log;
    EXPECT_NE(log.find("SIGTERM"), std::string::npos) << log;
}

} // namespace
} // namespace gpusched::testing
