#pragma once

#include "harness.hpp"
#include "terminal_screen.hpp"

#include <sys/types.h>
#include <termios.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::testing {

struct TerminalOptions {
    std::vector<std::string> args;
    unsigned rows = 12;
    unsigned columns = 100;
    std::optional<std::filesystem::path> stdin_path; // default: the terminal
};

// gpusched on a pseudo-terminal of its own, as a shell with job control runs it: the pty is
// the controlling terminal of a session whose leader (standing for the shell) puts gpusched
// in a process group of its own, in the terminal's foreground, and waits for it. Keys typed
// into the terminal (Ctrl-C, Ctrl-Z, Ctrl-D) reach gpusched as they would from a keyboard;
// what it writes is fed to a TerminalScreen.
class PseudoTerminal {
public:
    PseudoTerminal(const TempDir& dir, TerminalOptions options);
    ~PseudoTerminal();
    PseudoTerminal(const PseudoTerminal&) = delete;
    PseudoTerminal& operator=(const PseudoTerminal&) = delete;

    pid_t pid() const { return m_gpusched; } // gpusched, leader of its process group
    void type(const std::string& keys);
    // Resizes the terminal: the kernel sends SIGWINCH to its foreground process group.
    void resize(unsigned rows, unsigned columns);

    // Reads what gpusched wrote, feeding the screen, until `condition` holds; false after
    // `timeout`.
    bool read_until(const std::function<bool()>& condition,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20));
    // Reads until nothing more comes for `quiet`: what a process wrote just before it
    // stopped may still be on its way through the terminal.
    void drain(std::chrono::milliseconds quiet = std::chrono::milliseconds(200));
    // Reads until gpusched has exited; its status as the shell saw it.
    Finished wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));

    // The terminal's modes (what `stty -g` shows) as it was made, and now.
    const termios& initial_modes() const { return m_initial_modes; }
    termios modes() const;

    const TerminalScreen& screen() const { return m_screen; }
    const std::string& written() const { return m_written; } // every byte, as written
    // Called with the screen after each read, to check what must hold at every moment.
    std::function<void(const TerminalScreen&)> on_output;

private:
    bool read_some(int timeout_ms);

    int m_master = -1;
    termios m_initial_modes{};
    pid_t m_shell = -1;
    pid_t m_gpusched = -1;
    bool m_reaped = false;
    TerminalScreen m_screen;
    std::string m_written;
};

// A process's state letter from /proc (R, S, T, Z...), or '?' once it is gone.
char process_state(pid_t pid);

// Whether a job's shell is stopped: 'T' itself, or held in vfork ('D') by a child that was
// stopped before its exec, as dash's `sleep` can be when the stop lands at that moment.
bool job_stopped(pid_t pid);

} // namespace gpusched::testing
