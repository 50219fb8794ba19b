// Inputs that would otherwise fill memory or stall gpusched: NUL bytes and endless lines
// in the input.
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

constexpr long k_bounded_rss_kib = 64 * 1024;

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
    EXPECT_LT(result.max_rss_kib, k_bounded_rss_kib) << "the line was kept in memory";
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

} // namespace
} // namespace gpusched::testing
