#include <gpusched/sys/stderr_log.hpp>

#include <gpusched/sys/progress_line.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace gpusched::sys {
namespace {

// spdlog's colour sink's codes for the levels that are coloured.
std::string_view colour_of(spdlog::level::level_enum level)
{
    switch (level) {
    case spdlog::level::warn:
        return "\033[33m\033[1m";
    case spdlog::level::err:
        return "\033[31m\033[1m";
    case spdlog::level::critical:
        return "\033[1m\033[41m";
    default:
        return "";
    }
}

constexpr std::string_view k_reset = "\033[m";

} // namespace

StderrWriter::StderrWriter() : m_fd(STDERR_FILENO)
{
    struct stat info {};
    if (fstat(STDERR_FILENO, &info) != 0) {
        return;
    }
    if (S_ISSOCK(info.st_mode)) {
        m_socket = true;
    } else if (S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode)) {
        // Regular files never stall; pipes and terminals can.
        m_own.reset(open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (m_own) {
            m_fd = m_own.get();
        } else {
            m_poll_first = true;
        }
    }
}

long StderrWriter::write_some(std::string_view bytes)
{
    while (true) {
        ssize_t written = 0;
        if (m_socket) {
            written = send(m_fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
            pollfd writable{m_fd, POLLOUT, 0};
            if (m_poll_first && poll(&writable, 1, 0) == 0) {
                errno = EAGAIN;
                return -1;
            }
            written = ::write(m_fd, bytes.data(), bytes.size());
        }
        if (written >= 0 || errno != EINTR) {
            return static_cast<long>(written);
        }
    }
}

StderrWriter::Written StderrWriter::write(std::string_view bytes)
{
    const auto failed = [this] {
        if (errno == EAGAIN) {
            return Written::dropped;
        }
        m_unfinished.clear();
        return Written::gone;
    };
    if (!m_unfinished.empty()) {
        const long written = write_some(m_unfinished);
        if (written < 0) {
            return failed();
        }
        m_unfinished.erase(0, static_cast<std::size_t>(written));
        if (!m_unfinished.empty()) {
            return Written::dropped;
        }
    }
    const long written = write_some(bytes);
    if (written < 0) {
        return failed();
    }
    m_unfinished.assign(bytes.substr(static_cast<std::size_t>(written)));
    return Written::whole;
}

bool StderrWriter::write_within(std::string_view bytes, std::chrono::milliseconds within)
{
    const auto deadline = std::chrono::steady_clock::now() + within;
    bool taken = false; // then only its rest, kept in m_unfinished, is left to write
    while (true) {
        const auto written = write(taken ? std::string_view{} : bytes);
        if (written == Written::gone) {
            return false;
        }
        taken = taken || written == Written::whole;
        if (taken && m_unfinished.empty()) {
            return true;
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd writable{m_fd, POLLOUT, 0};
        if (left.count() <= 0 ||
            (poll(&writable, 1, static_cast<int>(left.count())) < 0 && errno != EINTR)) {
            return false;
        }
    }
}

StderrWriter& stderr_writer()
{
    static StderrWriter writer;
    return writer;
}

StderrWriter::Written StderrSink::write_message(const spdlog::details::log_msg& message)
{
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    const std::string_view text(formatted.data(), formatted.size());
    std::string line;
    const auto colour = colour_of(message.level);
    if (m_colour && !colour.empty() && message.color_range_end > message.color_range_start) {
        line.append(text.substr(0, message.color_range_start))
            .append(colour)
            .append(text.substr(message.color_range_start,
                                message.color_range_end - message.color_range_start))
            .append(k_reset)
            .append(text.substr(message.color_range_end));
    } else {
        line.assign(text);
    }
    if (m_progress) {
        m_progress->hide();
    }
    const auto written = stderr_writer().write(line);
    if (m_progress) {
        m_progress->restore();
    }
    return written;
}

void StderrSink::sink_it_(const spdlog::details::log_msg& message)
{
    if (m_dropped > 0) {
        const auto notice = fmt::format("{} log line{} dropped: stderr was not being read",
                                        m_dropped, m_dropped == 1 ? "" : "s");
        const spdlog::details::log_msg said(message.time, {}, message.logger_name,
                                            spdlog::level::warn, notice);
        const auto written = write_message(said);
        if (written == StderrWriter::Written::dropped) {
            ++m_dropped;
            return;
        }
        m_dropped = 0;
    }
    // The log is read by people, on terminals, and names what others wrote: the commands,
    // labels and directories of a queue's jobs, the users and commands of those who hold a
    // GPU. What would act on the terminal is shown as an escape instead.
    const auto shown = visible_text({message.payload.data(), message.payload.size()});
    auto visible = message;
    visible.payload = shown;
    if (write_message(visible) == StderrWriter::Written::dropped) {
        ++m_dropped;
    }
}

} // namespace gpusched::sys
