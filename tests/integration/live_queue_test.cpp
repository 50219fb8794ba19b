// Live queues at their end: every command written into a named pipe is run by a drain, or
// named and saved by a stop (with the jobs it interrupted) or a halt, and one writer's
// unfinished line never joins the next writer's first line.
#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

constexpr int k_queued_commands = 299;

class LiveQueue : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(mkfifo(m_queue.c_str(), 0600), 0);
        ASSERT_EQ(mkfifo(m_gate.c_str(), 0600), 0);
    }

    // A job left blocked by the test stops blocking, whatever the test's outcome.
    void TearDown() override
    {
        // Non-blocking: with no job waiting at the gate there is nothing to open.
        const int fd = open(m_gate.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            close(fd);
        }
    }

    // Opens the named pipe for writing, writes, and closes it: one writer's whole visit.
    static void write_to(const fs::path& fifo, const std::string& text)
    {
        const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0) << "open " << fifo;
        ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
        close(fd);
    }

    // A job that waits until the test opens the gate.
    std::string blocker() const { return fmt::format("cat {} > /dev/null", m_gate.string()); }

    // Lets the blocker end, once it has come to the gate.
    void open_gate() const { write_to(m_gate, ""); }

    // Command N of the 299: records that it ran.
    std::string command(int n) const { return fmt::format("echo {} >> {}", n, m_ran.string()); }

    std::string commands(int first, int last) const
    {
        std::string text;
        for (int n = first; n <= last; ++n) {
            text += command(n) + "\n";
        }
        return text;
    }

    // How many times each command has run.
    std::map<int, int> ran() const
    {
        std::map<int, int> counts;
        for (const auto& line : split_lines(read_file(m_ran))) {
            ++counts[std::stoi(line)];
        }
        return counts;
    }

    // Writes the 299 commands, the 11th a job that blocks the only GPU, in two visits: the
    // second one while that job runs, so that the scheduler, holding all it may read ahead,
    // leaves it in the pipe.
    void fill_queue(const Process& gpusched) const
    {
        write_to(m_queue, commands(1, 10) + blocker() + "\n" + commands(11, 100));
        ASSERT_TRUE(eventually(
            [&] { return gpusched.err_so_far().find("job 11 started") != std::string::npos; }));
        write_to(m_queue, commands(101, k_queued_commands));
    }

    // The file the log names as holding the commands not started.
    static std::optional<fs::path> saved_file(const std::string& log)
    {
        const std::string before = "are saved in ";
        const auto start = log.find(before);
        if (start == std::string::npos) {
            return std::nullopt;
        }
        const auto from = start + before.size();
        return fs::path(log.substr(from, log.find(": give", from) - from));
    }

    // The commands of a command file, without its comments.
    static std::vector<std::string> commands_in(const fs::path& file)
    {
        std::vector<std::string> found;
        for (const auto& line : split_lines(read_file(file))) {
            if (!line.empty() && line[0] != '#') {
                found.push_back(line);
            }
        }
        return found;
    }

    LaunchOptions run_on_queue() const
    {
        return {{"--gpus", "0", "--kill-after", "1", "--", m_queue.string()},
                std::nullopt,
                std::nullopt,
                {{"XDG_STATE_HOME", (m_dir / "state").string()}}};
    }

    TempDir m_dir;
    fs::path m_queue = m_dir / "queue";
    fs::path m_gate = m_dir / "gate";
    fs::path m_ran = m_dir / "ran";
};

TEST_F(LiveQueue, DrainRunsEveryCommandAlreadyWritten)
{
    Process gpusched(m_dir, run_on_queue());
    fill_queue(gpusched);
    gpusched.signal(SIGUSR1);
    ASSERT_TRUE(
        eventually([&] { return gpusched.err_so_far().find("SIGUSR1") != std::string::npos; }));
    open_gate();
    const auto result = gpusched.wait();
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    const auto counts = ran();
    EXPECT_EQ(counts.size(), static_cast<std::size_t>(k_queued_commands)) << result.err;
    for (const auto& [n, times] : counts) {
        EXPECT_EQ(times, 1) << "command " << n;
    }
    EXPECT_EQ(result.err.find("not started"), std::string::npos) << result.err;
}

TEST_F(LiveQueue, StopNamesAndSavesEveryCommandNotStarted)
{
    Process gpusched(m_dir, run_on_queue());
    fill_queue(gpusched);
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait();
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;

    const auto file = saved_file(result.err);
    ASSERT_TRUE(file) << result.err;
    EXPECT_EQ(file->parent_path(), m_dir / "state" / "gpusched");
    EXPECT_EQ(fs::status(*file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    const auto saved = commands_in(*file);
    auto before = ran();
    // The first ten ran, the blocker was stopped: it is saved first, marked, and every other
    // one is named and saved after it.
    EXPECT_EQ(before.size(), 10u) << result.err;
    EXPECT_EQ(saved.size(), static_cast<std::size_t>(k_queued_commands) - before.size() + 1);
    ASSERT_FALSE(saved.empty());
    EXPECT_EQ(saved[0], blocker());
    EXPECT_NE(read_file(*file).find("# interrupted by the stop: job 11 on GPU 0\n" + blocker()),
              std::string::npos)
        << read_file(*file);
    EXPECT_NE(result.err.find("not started, and the 1 job the stop interrupted are saved in "),
              std::string::npos)
        << result.err;
    for (const auto& command : saved) {
        EXPECT_NE(result.err.find(": " + command + "\n"), std::string::npos)
            << "not named in the log: " << command;
    }

    std::thread gate([&] { open_gate(); }); // for the blocker, run again first
    const auto again = run(m_dir, {{"--gpus", "0", file->string()}});
    gate.join();
    ASSERT_EQ(again.exit_status, 0) << again.err;
    const auto counts = ran();
    EXPECT_EQ(counts.size(), static_cast<std::size_t>(k_queued_commands));
    for (const auto& [n, times] : counts) {
        EXPECT_EQ(times, 1) << "command " << n;
    }
}

TEST_F(LiveQueue, HaltSavesWhatItDidNotStartWhereTheStateDirectoryFails)
{
    write_file(m_dir / "not-a-directory", "");
    Process gpusched(m_dir, {{"--gpus", "0", "--halt", "soon,fail=1", "--", m_queue.string()},
                             std::nullopt,
                             std::nullopt,
                             {{"XDG_STATE_HOME", (m_dir / "not-a-directory").string()},
                              {"TMPDIR", m_dir.path().string()}}});
    write_to(m_queue, "exit 3\n" + commands(1, 20));
    const auto result = gpusched.wait();
    ASSERT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_TRUE(ran().empty());
    const auto file = saved_file(result.err);
    ASSERT_TRUE(file) << result.err;
    EXPECT_EQ(file->parent_path(), m_dir.path());
    EXPECT_EQ(commands_in(*file), split_lines(commands(1, 20)));
}

TEST_F(LiveQueue, CommandsAreNamedWhenNoFileCanBeWritten)
{
    write_file(m_dir / "not-a-directory", "");
    const auto nowhere = (m_dir / "not-a-directory").string();
    Process gpusched(m_dir, {{"--gpus", "0", "--", m_queue.string()},
                             std::nullopt,
                             std::nullopt,
                             {{"XDG_STATE_HOME", nowhere}, {"TMPDIR", nowhere}}});
    write_to(m_queue, blocker() + "\n" + commands(1, 3));
    ASSERT_TRUE(eventually(
        [&] { return gpusched.err_so_far().find("job 1 started") != std::string::npos; }));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    EXPECT_NE(result.err.find("could not be saved"), std::string::npos) << result.err;
    for (int n = 1; n <= 3; ++n) {
        EXPECT_NE(
            result.err.find("not started: job " + std::to_string(n + 1) + ": " + command(n) + "\n"),
            std::string::npos)
            << result.err;
    }
}

TEST_F(LiveQueue, AStopNeverRunsALineStillBeingWritten)
{
    Process gpusched(m_dir, run_on_queue());
    // A writer that has not finished its line, and is still there at the stop.
    const int writer = open(m_queue.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    const std::string unfinished = command(1);
    ASSERT_EQ(write(writer, unfinished.data(), unfinished.size()),
              static_cast<ssize_t>(unfinished.size()));
    gpusched.signal(SIGTERM);
    const auto result = gpusched.wait();
    close(writer);
    EXPECT_EQ(result.exit_status, 128 + SIGTERM) << result.err;
    EXPECT_TRUE(ran().empty());
    EXPECT_NE(result.err.find("unfinished"), std::string::npos) << result.err;
    const auto file = saved_file(result.err);
    ASSERT_TRUE(file) << result.err;
    EXPECT_TRUE(commands_in(*file).empty()) << "kept as a comment, so it never runs";
    EXPECT_NE(read_file(*file).find(unfinished), std::string::npos);
}

// Writer A leaves its command without a newline and closes the FIFO; writer B comes next.
void expect_writers_lines_kept_apart(const TempDir& dir, const fs::path& queue, Process& gpusched,
                                     bool busy)
{
    const auto out = dir / "out";
    const auto gate = dir / "gate";
    std::string before;
    if (busy) {
        // The only GPU is taken and 70 commands wait: the scheduler reads no more for now.
        before = fmt::format("cat {} > /dev/null\n", gate.string());
        for (int n = 0; n < 70; ++n) {
            before += "true\n";
        }
    }
    const auto write_to = [&](const std::string& text) {
        const int fd = open(queue.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
        close(fd);
    };
    write_to(before + fmt::format("echo a >> {}", out.string()));
    // Writers one after another: B comes once gpusched has seen A leave.
    ASSERT_TRUE(eventually([&] {
        return gpusched.err_so_far().find("without its newline") != std::string::npos;
    })) << gpusched.err_so_far();
    write_to(fmt::format("echo b >> {}\n", out.string()));
    if (busy) {
        const int fd = open(gate.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        close(fd);
    }
    ASSERT_TRUE(eventually([&] { return split_lines(read_file(out)).size() == 2; }));
    gpusched.signal(SIGUSR1);
    const auto result = gpusched.wait();
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto lines = split_lines(read_file(out));
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, (std::vector<std::string>{"a", "b"})) << result.err;
}

TEST_F(LiveQueue, AWritersUnfinishedLineEndsWhenItCloses)
{
    Process gpusched(m_dir, {{"--gpus", "0", "--", m_queue.string()}});
    expect_writers_lines_kept_apart(m_dir, m_queue, gpusched, false);
}

TEST_F(LiveQueue, AWritersUnfinishedLineEndsWhenItClosesWhileNothingIsRead)
{
    Process gpusched(m_dir, {{"--gpus", "0", "--", m_queue.string()}});
    expect_writers_lines_kept_apart(m_dir, m_queue, gpusched, true);
}

TEST_F(LiveQueue, AWritersUnfinishedLineEndsWhenItClosesOnStdin)
{
    // As in a shell, opening the FIFO as stdin waits for a writer: hold one while starting.
    const int starter = open(m_queue.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(starter, 0);
    Process gpusched(m_dir, {{"--gpus", "0"}, std::nullopt, m_queue});
    close(starter);
    expect_writers_lines_kept_apart(m_dir, m_queue, gpusched, false);
}

} // namespace
} // namespace gpusched::testing
