#include <gpusched/sys/progress_line.hpp>

#include <gpusched/status_row.hpp>
#include <gpusched/sys/stderr_log.hpp>

#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace gpusched::sys {
namespace {

// Carriage return, then erase to the end of the line.
constexpr std::string_view k_erase_line = "\r\033[K";

// Below this many rows, a reserved row would leave too little room for the output.
constexpr unsigned k_fewest_rows = 4;

// Giving the terminal back may wait this long for a terminal that does not take output now
// (stopped with Ctrl-S): a scroll region left behind would spoil the shell's screen.
constexpr auto k_give_back_wait = std::chrono::milliseconds(1000);

} // namespace

ProgressLine::ProgressLine(int fd) : m_fd(fd), m_terminal(isatty(fd) != 0) {}

ProgressLine::Size ProgressLine::window_size() const
{
    winsize size{};
    if (ioctl(m_fd, TIOCGWINSZ, &size) != 0) {
        return {};
    }
    return {size.ws_row, size.ws_col};
}

// A terminal that is not gpusched's controlling terminal has no foreground to ask about:
// nobody else's screen is there to spoil.
bool ProgressLine::in_foreground() const
{
    const pid_t foreground = tcgetpgrp(m_fd);
    return foreground < 0 || foreground == getpgrp();
}

void ProgressLine::show(std::string text)
{
    m_text = std::move(text);
    draw();
}

void ProgressLine::redraw()
{
    if (!m_text.empty()) {
        draw();
    }
}

void ProgressLine::draw()
{
    m_hidden = false;
    if (!m_terminal) {
        draw_in_place({});
        return;
    }
    if (!in_foreground()) {
        release(); // the shell's screen now
        return;
    }
    const Size size = window_size();
    if (size.rows < k_fewest_rows) {
        release();
        draw_in_place(size);
        return;
    }
    std::string bytes;
    if (m_reserved != size.rows) {
        hide();
        bytes = reserve_bottom_row(size.rows);
        m_reserved = size.rows;
    }
    bytes += draw_on_bottom_row(size.rows, size.columns, m_text);
    stderr_writer().write(bytes); // a status line that cannot be drawn now is not missed
}

void ProgressLine::draw_in_place(const Size& size)
{
    std::string line(k_erase_line);
    // A wrapped line could not be erased with one \r.
    line += size.columns > 1 && m_text.size() >= size.columns
                ? std::string_view(m_text).substr(0, size.columns - 1)
                : std::string_view(m_text);
    stderr_writer().write(line);
    m_visible = true;
}

void ProgressLine::hide()
{
    if (m_visible) {
        stderr_writer().write(k_erase_line);
        m_visible = false;
        m_hidden = true;
    }
}

void ProgressLine::restore()
{
    if (m_hidden) {
        draw();
    }
}

void ProgressLine::release()
{
    hide();
    m_hidden = false;
    if (m_reserved != 0) {
        stderr_writer().write_within(release_bottom_row(m_reserved), k_give_back_wait);
        m_reserved = 0;
    }
}

void ProgressLine::finish()
{
    release();
    m_text.clear();
}

void log_around_progress_line(std::shared_ptr<ProgressLine> line)
{
    for (const auto& sink : spdlog::default_logger()->sinks()) {
        if (auto* own = dynamic_cast<StderrSink*>(sink.get())) {
            own->set_progress_line(line);
        }
    }
}

} // namespace gpusched::sys
