#pragma once

#include <memory>
#include <string>

namespace gpusched::sys {

// The status line on stderr, written as the log is, never blocking (stderr_writer()).
//
// On a terminal it has the bottom row to itself (see status_row.hpp): everything else, the
// log and the jobs' own output alike, scrolls in the rows above, so neither is glued into the
// other, and jobs that write straight to the terminal need not be known of. The row is taken
// on the first draw and given back (scroll region reset, line erased, cursor shown) by
// finish(), by release() for Ctrl-Z, and by the destructor of whoever holds the run (see
// JobRunner), so that every way out of a run gives the terminal back. It is taken only while
// gpusched is in the terminal's foreground: run in the background (`&`, or `bg` after
// Ctrl-Z), it draws nothing over the shell. Where the terminal is too small, or stderr is no
// terminal (--progress), the line is drawn in place, at the end of the output, and stepped
// around: the writer hides it, writes, and restores it.
class ProgressLine {
public:
    // `fd` is where the terminal is asked for its size and foreground.
    explicit ProgressLine(int fd);

    void show(std::string text);
    // Draws the last text again, after a resize (SIGWINCH) or a resume (SIGCONT).
    void redraw();
    // Around a write to stderr: needed only where the line is drawn in place.
    void hide();
    void restore();
    // Gives the terminal back until the next show() or redraw(): for Ctrl-Z.
    void release();
    // Erases the line for good and gives the terminal back: later output is not followed by it.
    void finish();

private:
    struct Size {
        unsigned rows = 0;
        unsigned columns = 0;
    };
    void draw();
    void draw_in_place(const Size& size);
    bool in_foreground() const;
    Size window_size() const;

    int m_fd;
    bool m_terminal;
    std::string m_text;
    bool m_visible = false;  // drawn in place
    bool m_hidden = false;   // drawn in place, and hidden for a write
    unsigned m_reserved = 0; // the rows of the terminal whose bottom row is ours; 0 when none
};

// Routes the log through a sink that steps around `line`.
void log_around_progress_line(std::shared_ptr<ProgressLine> line);

} // namespace gpusched::sys
