#include <gpusched/sys/progress_line.hpp>

#include <gpusched/sys/stderr_log.hpp>

#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <unistd.h>

namespace gpusched::sys {
namespace {

// Carriage return, then erase to the end of the line.
constexpr std::string_view k_erase_line = "\r\033[K";

} // namespace

void ProgressLine::show(std::string text)
{
    winsize size{};
    if (ioctl(m_fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && text.size() >= size.ws_col) {
        text.resize(size.ws_col - 1u); // a wrapped line could not be erased with one \r
    }
    m_text = std::move(text);
    draw();
}

void ProgressLine::draw()
{
    std::string line(k_erase_line);
    line += m_text;
    stderr_writer().write(line); // a status line that cannot be drawn now is not missed
    m_visible = true;
}

void ProgressLine::hide()
{
    if (m_visible) {
        stderr_writer().write(k_erase_line);
        m_visible = false;
    }
}

void ProgressLine::finish()
{
    hide();
    m_text.clear();
}

void ProgressLine::restore()
{
    if (!m_text.empty()) {
        draw();
    }
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
