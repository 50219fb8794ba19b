#include <gpusched/sys/input_reader.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/standard_streams.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace gpusched::sys {
namespace {

constexpr std::size_t k_chunk_size = 64 * 1024;
// What a stop reads at most from one pipe: the most Linux lets an unprivileged user give a
// pipe (/proc/sys/fs/pipe-max-size), so all it holds.
constexpr std::uint64_t k_most_read_at_stop = 1024 * 1024;

UsageError cannot_open(const std::string& path, int error)
{
    return UsageError(fmt::format("cannot open input '{}': {}", path, std::strerror(error)));
}

// A named pipe given as stdin (`gpusched < queue.fifo`) is a live queue too; an anonymous
// pipe (`cmd | gpusched`) is not. Only /proc tells them apart.
bool stdin_is_named_pipe()
{
    struct stat info {};
    if (fstat(STDIN_FILENO, &info) != 0 || !S_ISFIFO(info.st_mode)) {
        return false;
    }
    std::array<char, 64> target{};
    const auto length = readlink("/proc/self/fd/0", target.data(), target.size() - 1);
    return length > 0 &&
           std::string_view(target.data(), static_cast<std::size_t>(length)).substr(0, 5) !=
               "pipe:";
}

} // namespace

InputReader::InputReader(const std::vector<std::string>& paths,
                         const std::optional<std::string>& fifo)
    : m_chunk(k_chunk_size)
{
    for (const auto& path : paths) {
        if (path == "-") {
            add_stdin();
        } else {
            add_path(path);
        }
    }
    if (fifo) {
        add_fifo(*fifo, true);
    }
    if (paths.empty() && !fifo) {
        add_stdin();
    }
}

void InputReader::add_stdin()
{
    if (stdin_was_closed()) {
        throw UsageError("stdin is closed: name the command files, or give commands on stdin");
    }
    Source source;
    source.name = "stdin";
    source.is_stdin = true;
    // A descriptor of our own, so closing it never closes fd 0 and it stays out of jobs.
    source.fd.reset(fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!source.fd) {
        throw UsageError(fmt::format("cannot read stdin: {}", std::strerror(errno)));
    }
    source.live = stdin_is_named_pipe();
    struct stat info {};
    if (fstat(source.fd.get(), &info) == 0 && S_ISDIR(info.st_mode)) {
        throw UsageError(fmt::format("cannot read stdin: {}", std::strerror(EISDIR)));
    }
    source.seekable = S_ISREG(info.st_mode);
    // A run that seems to hang is waiting for its commands to be typed: it says so, once,
    // as GNU parallel does.
    const bool said = std::any_of(m_sources.begin(), m_sources.end(),
                                  [](const Source& earlier) { return earlier.is_stdin; });
    if (!said && isatty(source.fd.get()) != 0) {
        spdlog::info("reading commands from the terminal; end with Ctrl-D");
    }
    m_sources.push_back(std::move(source));
}

void InputReader::add_path(const std::string& path)
{
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
        throw cannot_open(path, errno);
    }
    if (S_ISFIFO(info.st_mode)) {
        add_fifo(path, false);
        return;
    }
    if (S_ISDIR(info.st_mode)) {
        throw cannot_open(path, EISDIR);
    }
    Source source;
    source.name = path;
    source.fd.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!source.fd) {
        throw cannot_open(path, errno);
    }
    source.seekable = S_ISREG(info.st_mode);
    m_sources.push_back(std::move(source));
}

void InputReader::add_fifo(const std::string& path, bool create)
{
    if (create && mkfifo(path.c_str(), 0600) != 0 && errno != EEXIST) {
        throw UsageError(fmt::format("cannot create FIFO '{}': {}", path, std::strerror(errno)));
    }
    Source source;
    source.name = path;
    source.live = true;
    // Non-blocking, or opening would wait for the first writer.
    source.fd.reset(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!source.fd) {
        throw cannot_open(path, errno);
    }
    struct stat info {};
    if (fstat(source.fd.get(), &info) != 0 || !S_ISFIFO(info.st_mode)) {
        throw UsageError(fmt::format("'{}' exists and is not a FIFO", path));
    }
    m_sources.push_back(std::move(source));
}

InputLine InputReader::input_line(LogicalLine line, const Source& source)
{
    return InputLine{std::move(line), source.name, std::nullopt, source.seekable, false, {}};
}

std::optional<InputLine> InputReader::next_line()
{
    if (m_stopped) {
        if (m_left.empty()) {
            return std::nullopt;
        }
        auto line = std::move(m_left.front());
        m_left.pop_front();
        return line;
    }
    while (m_current < m_sources.size()) {
        auto& source = m_sources[m_current];
        if (auto line = source.lines.next()) {
            return input_line(std::move(*line), source);
        }
        if (!source.lines.exhausted()) {
            return std::nullopt;
        }
        close_source(source);
        ++m_current;
    }
    return std::nullopt;
}

bool InputReader::finished() const
{
    return m_stopped ? m_left.empty() : m_current == m_sources.size();
}

void InputReader::add_poll_fds(std::vector<pollfd>& fds, bool wants_commands)
{
    const int fd = fd_to_poll();
    if (fd < 0) {
        return;
    }
    if (wants_commands) {
        fds.push_back({fd, POLLIN, 0});
    } else if (m_sources[m_current].live) {
        // Hang-ups only: that the writers have gone is noted even while nothing is read, so
        // a line one of them left unfinished is not joined to the next writer's first line.
        fds.push_back({fd, 0, 0});
    }
}

bool InputReader::on_ready(const pollfd& ready)
{
    if (ready.fd < 0 || ready.fd != fd_to_poll()) {
        return false;
    }
    if ((ready.events & POLLIN) != 0) {
        read_some(); // a read of 0 bytes tells that the writers have gone
    } else {
        on_writers_gone(m_sources[m_current]);
    }
    return true;
}

int InputReader::fd_to_poll() const
{
    return m_stopped || m_current == m_sources.size() ? -1 : m_sources[m_current].fd.get();
}

void InputReader::read_some()
{
    if (fd_to_poll() >= 0) {
        read_from(m_sources[m_current]);
    }
}

bool InputReader::read_from(Source& source)
{
    end_lines_of_gone_writers(source);
    if (source.live && unread_bytes(source) == 0) {
        // Not read(2): on a named pipe given as stdin it would wait for a writer that opened
        // it just now. With nothing in it, a hang-up says that its writers have gone.
        pollfd state{source.fd.get(), POLLIN, 0};
        if (poll(&state, 1, 0) == 1 && (state.revents & POLLHUP) != 0) {
            on_writers_gone(source);
        }
        return false;
    }
    std::size_t wanted = m_chunk.size();
    if (!source.writers_gone_at.empty()) {
        wanted = static_cast<std::size_t>(
            std::min<std::uint64_t>(wanted, source.writers_gone_at.front() - source.bytes_read));
    }
    const auto got = ::read(source.fd.get(), m_chunk.data(), wanted);
    if (got > 0) {
        source.lines.feed(std::string_view(m_chunk.data(), static_cast<std::size_t>(got)));
        source.bytes_read += static_cast<std::uint64_t>(got);
        end_lines_of_gone_writers(source);
        return true;
    }
    if (got == 0) {
        if (source.live) {
            on_writers_gone(source);
        } else {
            source.lines.end_of_input();
        }
        return false;
    }
    if (errno == EAGAIN || errno == EINTR) {
        return false;
    }
    throw_errno(fmt::format("read {}", source.name));
}

// The last writer of a named pipe has closed it. What the writers wrote may still be in the
// pipe, unread (nothing is read while the scheduler holds all it may take): their last line
// ends after it.
void InputReader::on_writers_gone(Source& source)
{
    const auto at = source.bytes_read + unread_bytes(source);
    if (source.writers_gone_at.empty() || source.writers_gone_at.back() != at) {
        source.writers_gone_at.push_back(at);
    }
    end_lines_of_gone_writers(source);
    if (!m_stopped) {
        reopen(source);
    }
}

void InputReader::end_lines_of_gone_writers(Source& source)
{
    auto& gone = source.writers_gone_at;
    while (!gone.empty() && gone.front() <= source.bytes_read) {
        gone.pop_front();
        if (source.lines.end_line()) {
            spdlog::warn("{}: a writer closed it after a command without its newline; the "
                         "command ends there (end every command with a newline: a writer that "
                         "opens it at once could otherwise add to it)",
                         source.name);
        }
    }
}

// A read end whose writers have all gone reports a hang-up until a writer opens the FIFO
// again, so poll would no longer wait; one opened afresh does not. The new one is opened
// before the old one is closed, so the FIFO always has a reader: writers never get ENXIO or
// SIGPIPE, and what is in it stays there.
void InputReader::reopen(Source& source)
{
    const auto self = fmt::format("/proc/self/fd/{}", source.fd.get());
    UniqueFd fresh(open(self.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fresh) {
        throw_errno(fmt::format("open {} again", source.name));
    }
    source.fd = std::move(fresh);
}

// Everything written to it so far, without waiting. A pipe holds at most its capacity, so
// this ends even while writers go on writing.
void InputReader::read_what_is_written(Source& source)
{
    const auto started = source.bytes_read;
    while (source.bytes_read - started < k_most_read_at_stop && unread_bytes(source) > 0 &&
           read_from(source)) {
    }
    // Writers that have all gone leave a hang-up: the end of a pipe, or for a named pipe the
    // end of the line one of them left unfinished.
    pollfd state{source.fd.get(), POLLIN, 0};
    if (poll(&state, 1, 0) == 1 && (state.revents & POLLHUP) != 0 &&
        (state.revents & POLLIN) == 0) {
        read_from(source);
    }
}

void InputReader::stop_reading()
{
    if (m_stopped) {
        return;
    }
    m_stopped = true;
    for (; m_current < m_sources.size(); ++m_current) {
        auto& source = m_sources[m_current];
        if (!source.seekable && source.fd) {
            read_what_is_written(source);
        }
        while (auto line = source.lines.next()) {
            m_left.push_back(input_line(std::move(*line), source));
        }
        // A regular file is cut where its last chunk ended; what a pipe still holds without
        // its end was being written, and must not run cut short.
        if (!source.seekable) {
            source.lines.end_of_input();
            while (auto line = source.lines.next()) {
                m_unfinished.push_back(input_line(std::move(*line), source));
                m_unfinished.back().unfinished = true;
            }
        }
        close_source(source);
    }
}

// A pipe given as stdin is still open as descriptor 0: once it is no longer read, it is
// closed there too, so that a writer learns at once that nobody reads it (a named pipe's next
// writer waits for the next reader) instead of writing what nobody will read.
void InputReader::close_source(Source& source)
{
    const bool release_stdin = source.is_stdin && !source.seekable;
    source.fd.reset();
    if (release_stdin) {
        const UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (null) {
            dup2(null.get(), STDIN_FILENO);
        }
    }
}

// What is in the pipe and not read yet; 0 where that cannot be told (not a pipe).
std::uint64_t InputReader::unread_bytes(const Source& source)
{
    int unread = 0;
    if (ioctl(source.fd.get(), FIONREAD, &unread) != 0 || unread < 0) {
        return 0;
    }
    return static_cast<std::uint64_t>(unread);
}

bool InputReader::has_unrepeatable_input() const
{
    for (const auto& source : m_sources) {
        if (!source.seekable) {
            return true;
        }
    }
    return false;
}

std::vector<InputLine> InputReader::take_buffered()
{
    stop_reading();
    std::vector<InputLine> lines(std::make_move_iterator(m_left.begin()),
                                 std::make_move_iterator(m_left.end()));
    m_left.clear();
    lines.insert(lines.end(), std::make_move_iterator(m_unfinished.begin()),
                 std::make_move_iterator(m_unfinished.end()));
    m_unfinished.clear();
    return lines;
}

} // namespace gpusched::sys
