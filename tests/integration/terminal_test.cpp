// gpusched on a terminal, driven through a real pseudo-terminal: the status line keeps the
// bottom row while the jobs' output scrolls above it, the terminal is given back however the
// run ends, a run reading its commands from the terminal says how to end them, and Ctrl-Z
// stops the jobs with gpusched.
#include "pseudo_terminal.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
#include <csignal>
#include <regex>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

bool is_status_line(const std::string& line)
{
    return line.find(" elapsed") != std::string::npos;
}

bool shows_status(const TerminalScreen& screen)
{
    return is_status_line(screen.bottom_row()) && !screen.whole_screen_scrolls();
}

// What every way out of a run must leave: the whole screen scrolling again, no status line
// anywhere (from `first_row` down), the cursor visible.
void expect_terminal_given_back(const PseudoTerminal& terminal, unsigned first_row = 1)
{
    const auto& screen = terminal.screen();
    EXPECT_TRUE(screen.whole_screen_scrolls())
        << "scroll region " << screen.region_top() << "-" << screen.region_bottom() << " of "
        << screen.rows() << " rows left behind";
    EXPECT_TRUE(screen.cursor_visible());
    for (unsigned row = first_row; row <= screen.rows(); ++row) {
        EXPECT_FALSE(is_status_line(screen.row(row))) << "row " << row << ": " << screen.row(row);
    }
}

class Terminal : public ::testing::Test {
protected:
    // A job that writes its shell's pid to pid-ID, then waits for the file go-ID.
    std::string waiting_job(int id) const
    {
        return fmt::format("echo $$ > {0}/pid-{1}; while [ ! -e {0}/go-{1} ]; do sleep 0.05; done",
                           m_dir.path().string(), id);
    }
    pid_t job_pid(int id) const
    {
        const auto text = read_file(m_dir / fmt::format("pid-{}", id));
        return text.empty() ? 0 : std::stoi(text);
    }
    void release_job(int id) const { write_file(m_dir / fmt::format("go-{}", id), ""); }
    std::vector<std::string> command_file(const std::string& commands) const
    {
        write_file(m_dir / "commands", commands);
        return {(m_dir / "commands").string()};
    }

    TempDir m_dir;
};

TEST_F(Terminal, TheStatusLineKeepsTheBottomRowWhileTheJobsOutputScrollsAbove)
{
    // Three jobs print numbered lines straight to the terminal, a few at a time, while the
    // status line is redrawn: far more lines than the terminal has rows.
    write_file(m_dir / "print.sh",
               "for i in $(seq 1 25); do echo \"out-$1-$i\"; sleep 0.02; done\n");
    const auto print = fmt::format("sh {}", (m_dir / "print.sh").string());
    auto args = command_file(fmt::format("{0} 1\n{0} 2\n{0} 3\n", print));
    args.insert(args.begin(), {"--gpus", "0,1"});
    PseudoTerminal terminal(m_dir, {args, 10, 100});
    std::vector<std::string> wrong;
    bool status_seen = false;
    terminal.on_output = [&](const TerminalScreen& screen) {
        const auto bottom = screen.bottom_row();
        status_seen = status_seen || shows_status(screen);
        if (!bottom.empty() && !is_status_line(bottom) && !screen.whole_screen_scrolls()) {
            wrong.push_back(bottom);
        }
    };
    const auto finished = terminal.wait();
    ASSERT_FALSE(finished.timed_out);
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    EXPECT_TRUE(status_seen) << "the status line was never on the bottom row:\n" << finished.err;
    EXPECT_TRUE(wrong.empty()) << "on the reserved bottom row: " << wrong.front();

    // In the scrollback and on the screen, each line of the jobs is whole, on a line of its
    // own: nothing of the status line is glued to it.
    const std::regex job_line("out-[123]-[0-9]+");
    std::size_t job_lines = 0;
    for (const auto& line : terminal.screen().all_lines()) {
        if (line.find("out-") != std::string::npos) {
            EXPECT_TRUE(std::regex_match(line, job_line)) << "a mixed line: " << line;
            ++job_lines;
        }
    }
    EXPECT_EQ(job_lines, 75u) << finished.err;
    expect_terminal_given_back(terminal);
    const auto lines = terminal.screen().all_lines();
    EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                           [](const std::string& line) {
                               return line.find("3 succeeded") != std::string::npos;
                           }),
              lines.end())
        << "the summary comes after the terminal is given back";
}

TEST_F(Terminal, AResizedTerminalHasTheStatusLineOnItsNewBottomRow)
{
    auto args = command_file(waiting_job(1) + "\n");
    args.insert(args.begin(), {"--gpus", "0"});
    PseudoTerminal terminal(m_dir, {args, 10, 100});
    ASSERT_TRUE(terminal.read_until([&] { return shows_status(terminal.screen()); }))
        << terminal.written();
    terminal.resize(16, 90);
    ASSERT_TRUE(terminal.read_until([&] {
        return shows_status(terminal.screen()) && terminal.screen().region_bottom() == 15;
    })) << "scroll region "
        << terminal.screen().region_top() << "-" << terminal.screen().region_bottom() << "\n"
        << terminal.written();
    EXPECT_LT(terminal.screen().cursor_row(), 16u);
    release_job(1);
    const auto finished = terminal.wait();
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    // The line drawn on the old bottom row may still show above, where a terminal that grew
    // keeps its rows in place: only the rows the status line had since are looked at.
    expect_terminal_given_back(terminal, 11);
}

// gpusched changes no terminal mode, and a job cannot (its process group is not the
// terminal's foreground one): after a run, ended by itself or by Ctrl-C, `stty -g` shows
// what it showed before.
void expect_modes_as_before(const PseudoTerminal& terminal)
{
    const auto& before = terminal.initial_modes();
    const auto after = terminal.modes();
    EXPECT_EQ(after.c_iflag, before.c_iflag);
    EXPECT_EQ(after.c_oflag, before.c_oflag);
    EXPECT_EQ(after.c_cflag, before.c_cflag);
    EXPECT_EQ(after.c_lflag, before.c_lflag);
    EXPECT_EQ(std::memcmp(after.c_cc, before.c_cc, sizeof before.c_cc), 0);
}

TEST_F(Terminal, ARunLeavesTheTerminalsModesAsItFoundThem)
{
    for (int round = 0; round < 4; ++round) {
        auto args = command_file("sleep 0.2\nsleep 0.2\nsleep 0.2\n");
        args.insert(args.begin(), {"--gpus", "0,1,2"});
        PseudoTerminal terminal(m_dir, {args});
        const auto finished = terminal.wait();
        ASSERT_FALSE(finished.timed_out);
        EXPECT_EQ(finished.exit_status, 0) << finished.err;
        expect_modes_as_before(terminal);
    }
    auto args = command_file(waiting_job(1) + "\n");
    args.insert(args.begin(), {"--gpus", "0"});
    PseudoTerminal stopped(m_dir, {args});
    ASSERT_TRUE(stopped.read_until([&] { return shows_status(stopped.screen()); }));
    stopped.type("\x03");
    EXPECT_FALSE(stopped.wait().timed_out);
    expect_modes_as_before(stopped);
}

// Ctrl-C reaches gpusched from the keyboard; SIGTERM from elsewhere.
class TerminalStop : public Terminal, public ::testing::WithParamInterface<int> {};

TEST_P(TerminalStop, GivesTheTerminalBack)
{
    const int signal = GetParam();
    auto args = command_file(waiting_job(1) + "\n");
    args.insert(args.begin(), {"--gpus", "0"});
    PseudoTerminal terminal(m_dir, {args});
    ASSERT_TRUE(terminal.read_until([&] { return shows_status(terminal.screen()); }))
        << terminal.written();
    if (signal == SIGINT) {
        terminal.type("\x03");
    } else {
        kill(terminal.pid(), signal);
    }
    const auto finished = terminal.wait();
    ASSERT_FALSE(finished.timed_out);
    EXPECT_EQ(finished.exit_status, 128 + signal) << finished.err;
    expect_terminal_given_back(terminal);
}

INSTANTIATE_TEST_SUITE_P(Signals, TerminalStop, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& test) { return std::string(sigabbrev_np(test.param)); });

// Only the terminal's foreground group may read it, and each job has a group of its own: a
// job that reads /dev/tty is stopped (SIGTTIN). It is named at once, and Ctrl-C ends it at
// once rather than after --kill-after (a stopped process acts on SIGINT only once continued).
TEST_F(Terminal, AJobThatReadsTheTerminalIsNamedAndCtrlCEndsItAtOnce)
{
    auto args = command_file("cat /dev/tty\n");
    args.insert(args.begin(), {"--gpus", "0", "--kill-after", "60"});
    PseudoTerminal terminal(m_dir, {args});
    ASSERT_TRUE(terminal.read_until([&] {
        return terminal.written().find("job 1 on GPU 0 is stopped by SIGTTIN") != std::string::npos;
    })) << terminal.written();
    terminal.type("\x03");
    const auto finished = terminal.wait(30s);
    ASSERT_FALSE(finished.timed_out) << "Ctrl-C waited for --kill-after";
    EXPECT_EQ(finished.exit_status, 128 + SIGINT) << finished.err;
    expect_terminal_given_back(terminal);
}

TEST_F(Terminal, ARunReadingTheTerminalSaysHowToEndIt)
{
    PseudoTerminal terminal(m_dir, {{"--gpus", "0"}});
    const std::string hint = "reading commands from the terminal; end with Ctrl-D";
    ASSERT_TRUE(terminal.read_until([&] {
        return terminal.written().find(hint) != std::string::npos;
    })) << terminal.written();
    terminal.type(fmt::format("touch {}\n", (m_dir / "typed").string()));
    terminal.type("\x04"); // Ctrl-D at the start of a line: the end of the input
    const auto finished = terminal.wait();
    ASSERT_FALSE(finished.timed_out);
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    EXPECT_TRUE(fs::exists(m_dir / "typed")) << finished.err;
    EXPECT_EQ(finished.err.find(hint), finished.err.rfind(hint)) << "said once";
}

TEST_F(Terminal, ARunReadingAFileOnStdinSaysNothingOfCtrlD)
{
    write_file(m_dir / "commands", "true\n");
    PseudoTerminal terminal(m_dir, {{"--gpus", "0"}, 12, 100, m_dir / "commands"});
    const auto finished = terminal.wait();
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    EXPECT_NE(finished.err.find("1 succeeded"), std::string::npos) << finished.err;
    EXPECT_EQ(finished.err.find("Ctrl-D"), std::string::npos) << finished.err;
}

TEST_F(Terminal, CtrlZStopsTheJobsWithGpuschedAndSigcontResumesThem)
{
    auto args = command_file(waiting_job(1) + "\n" + waiting_job(2) + "\n");
    args.insert(args.begin(), {"--gpus", "0,1"});
    PseudoTerminal terminal(m_dir, {args});
    ASSERT_TRUE(terminal.read_until([&] {
        return job_pid(1) != 0 && job_pid(2) != 0 && shows_status(terminal.screen());
    })) << terminal.written();
    const pid_t first = job_pid(1);
    const pid_t second = job_pid(2);

    terminal.type("\x1a"); // Ctrl-Z
    ASSERT_TRUE(terminal.read_until([&] {
        return process_state(terminal.pid()) == 'T' && job_stopped(first) && job_stopped(second);
    })) << "gpusched "
        << process_state(terminal.pid()) << ", jobs " << process_state(first) << " "
        << process_state(second) << "\n"
        << terminal.written();
    terminal.drain();
    expect_terminal_given_back(terminal); // the shell's, while gpusched is stopped

    kill(-terminal.pid(), SIGCONT); // as `fg` does, once it has given the terminal back
    ASSERT_TRUE(terminal.read_until([&] {
        return process_state(terminal.pid()) != 'T' && !job_stopped(first) && !job_stopped(second);
    })) << "gpusched "
        << process_state(terminal.pid()) << ", jobs " << process_state(first) << " "
        << process_state(second);
    EXPECT_TRUE(terminal.read_until([&] { return shows_status(terminal.screen()); }))
        << "the status line is drawn again";

    release_job(1);
    release_job(2);
    const auto finished = terminal.wait();
    ASSERT_FALSE(finished.timed_out);
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    expect_terminal_given_back(terminal);
}

// Stopped for 3 s under a 2 s --timeout, a job that runs far less than 2 s of its own is not
// killed, and the job log's run time leaves the stopped time out.
} // namespace
} // namespace gpusched::testing
