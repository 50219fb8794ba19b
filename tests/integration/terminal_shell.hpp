#pragma once

#include "harness.hpp"

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {

// A shell on a pseudo-terminal of its own, as a terminal window runs one: the terminal is the
// controlling terminal of the shell's session, on its stdin, stdout and stderr, so `bash -m`
// has job control as an interactive shell does (each job in a process group of its own, `%1`
// that group, Ctrl-C typed reaching the foreground job alone). What anything writes to the
// terminal is kept, carriage returns dropped.
class TerminalShell {
public:
    // `args`: the program (a path) and its arguments; `env`: variables set, or unset with
    // nullopt, over the test's environment.
    TerminalShell(const std::vector<std::string>& args, const fs::path& cwd,
                  const std::map<std::string, std::optional<std::string>>& env);
    ~TerminalShell();
    TerminalShell(const TerminalShell&) = delete;
    TerminalShell& operator=(const TerminalShell&) = delete;

    pid_t pid() const { return m_shell; }
    void type(std::string_view keys);
    // Reads what was written, waiting up to `wait` for something; whether anything came.
    // Background jobs may write after the shell has ended: it reads them too.
    bool read(std::chrono::milliseconds wait);
    // The shell's exit, once it has come; never blocks.
    std::optional<Finished> try_wait();
    // SIGKILL to the shell and its process group, and reaped.
    void kill();
    const std::string& output() const { return m_output; }

private:
    int m_master = -1;
    pid_t m_shell = -1;
    std::optional<Finished> m_finished;
    std::string m_output;
};

} // namespace gpusched::testing
