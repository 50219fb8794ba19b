#pragma once

#include <memory>
#include <string>

namespace gpusched::sys {

// A status line kept at the bottom of the terminal on stderr. Everything else written to the
// terminal goes above it: the writer hides the line, writes, and restores it. It is written
// as the log is, never blocking (stderr_writer()).
class ProgressLine {
public:
    // `fd` is where the terminal's width is asked for.
    explicit ProgressLine(int fd) : m_fd(fd) {}

    void show(std::string text);
    void hide();
    void restore();
    // Erases the line for good: later output is not followed by it.
    void finish();

private:
    void draw();

    int m_fd;
    std::string m_text;
    bool m_visible = false;
};

// Routes the log through a sink that steps around `line`.
void log_around_progress_line(std::shared_ptr<ProgressLine> line);

} // namespace gpusched::sys
