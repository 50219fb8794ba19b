#include <gpusched/sys/write_all.hpp>
#include <gpusched/sys/progress_line.hpp>

#include <gpusched/log_pattern.hpp>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <unistd.h>

namespace gpusched::sys {
namespace {

// Carriage return, then erase to the end of the line.
constexpr std::string_view k_erase_line = "\r\033[K";

class ProgressAwareSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
    explicit ProgressAwareSink(std::shared_ptr<ProgressLine> line) : m_line(std::move(line)) {}

protected:
    void sink_it_(const spdlog::details::log_msg& message) override
    {
        spdlog::memory_buf_t formatted;
        formatter_->format(message, formatted);
        m_line->hide();
        write_all(STDERR_FILENO, std::string_view(formatted.data(), formatted.size()));
        m_line->restore();
    }
    void flush_() override {}

private:
    std::shared_ptr<ProgressLine> m_line;
};

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
    write_all(m_fd, line);
    m_visible = true;
}

void ProgressLine::hide()
{
    if (m_visible) {
        write_all(m_fd, k_erase_line);
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
    auto logger = std::make_shared<spdlog::logger>(
        spdlog::default_logger()->name(), std::make_shared<ProgressAwareSink>(std::move(line)));
    logger->set_level(spdlog::default_logger()->level());
    logger->set_pattern(k_log_pattern);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

} // namespace gpusched::sys
