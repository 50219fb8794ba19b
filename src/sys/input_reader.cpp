#include <gpusched/sys/input_reader.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/standard_streams.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace gpusched::sys {
namespace {

constexpr std::size_t k_chunk_size = 64 * 1024;

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
    // A descriptor of our own, so closing it never closes fd 0 and it stays out of jobs.
    source.fd.reset(fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!source.fd) {
        throw UsageError(fmt::format("cannot read stdin: {}", std::strerror(errno)));
    }
    if (stdin_is_named_pipe()) {
        source.keep_open.reset(open("/proc/self/fd/0", O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    }
    struct stat info {};
    if (fstat(source.fd.get(), &info) == 0 && S_ISDIR(info.st_mode)) {
        throw UsageError(fmt::format("cannot read stdin: {}", std::strerror(EISDIR)));
    }
    source.seekable = S_ISREG(info.st_mode);
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
    // Non-blocking, or opening would wait for the first writer.
    source.fd.reset(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!source.fd) {
        throw cannot_open(path, errno);
    }
    struct stat info {};
    if (fstat(source.fd.get(), &info) != 0 || !S_ISFIFO(info.st_mode)) {
        throw UsageError(fmt::format("'{}' exists and is not a FIFO", path));
    }
    // Holding a write end ourselves keeps the FIFO from reporting end-of-file (or POLLHUP
    // forever) each time its last writer closes it.
    source.keep_open.reset(open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!source.keep_open) {
        throw cannot_open(path, errno);
    }
    m_sources.push_back(std::move(source));
}

std::optional<InputLine> InputReader::next_line()
{
    while (m_current < m_sources.size()) {
        auto& source = m_sources[m_current];
        if (auto line = source.lines.next()) {
            return InputLine{std::move(*line), source.name, std::nullopt};
        }
        if (!source.lines.exhausted()) {
            return std::nullopt;
        }
        source.fd.reset();
        source.keep_open.reset();
        ++m_current;
    }
    return std::nullopt;
}

void InputReader::add_poll_fds(std::vector<pollfd>& fds, bool wants_commands)
{
    if (const int fd = fd_to_poll(); wants_commands && fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
    }
}

bool InputReader::on_ready(const pollfd& ready)
{
    if (ready.fd != fd_to_poll()) {
        return false;
    }
    read_some();
    return true;
}

int InputReader::fd_to_poll() const
{
    return finished() ? -1 : m_sources[m_current].fd.get();
}

void InputReader::read_some()
{
    if (finished()) {
        return;
    }
    auto& source = m_sources[m_current];
    const auto got = ::read(source.fd.get(), m_chunk.data(), m_chunk.size());
    if (got > 0) {
        source.lines.feed(std::string_view(m_chunk.data(), static_cast<std::size_t>(got)));
        return;
    }
    if (got == 0) {
        source.lines.end_of_input();
        return;
    }
    if (errno == EAGAIN || errno == EINTR) {
        return;
    }
    throw_errno(fmt::format("read {}", source.name));
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
    std::vector<InputLine> lines;
    for (; m_current < m_sources.size(); ++m_current) {
        auto& source = m_sources[m_current];
        source.lines.end_of_input();
        while (auto line = source.lines.next()) {
            lines.push_back(InputLine{std::move(*line), source.name, std::nullopt});
        }
    }
    return lines;
}

} // namespace gpusched::sys
