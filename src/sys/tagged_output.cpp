#include <gpusched/sys/write_all.hpp>
#include <gpusched/sys/tagged_output.hpp>

#include <gpusched/sys/system_error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace gpusched::sys {
namespace {

} // namespace

TaggedOutput::WriteEnds TaggedOutput::open(const std::string& prefix)
{
    WriteEnds ends;
    for (const int destination : {STDOUT_FILENO, STDERR_FILENO}) {
        std::array<int, 2> pipe_ends{};
        if (pipe2(pipe_ends.data(), O_CLOEXEC) != 0) {
            throw_errno("pipe2");
        }
        fcntl(pipe_ends[0], F_SETFL, O_NONBLOCK);
        m_streams.push_back(Stream{UniqueFd(pipe_ends[0]), destination, prefix, {}});
        (destination == STDOUT_FILENO ? ends.out : ends.err).reset(pipe_ends[1]);
    }
    return ends;
}

void TaggedOutput::add_poll_fds(std::vector<pollfd>& fds) const
{
    for (const auto& stream : m_streams) {
        fds.push_back({stream.read_end.get(), POLLIN, 0});
    }
}

void TaggedOutput::emit(Stream& stream, std::string_view line)
{
    std::string tagged;
    tagged.reserve(stream.prefix.size() + line.size() + 1);
    tagged.append(stream.prefix).append(line).push_back('\n');
    if (m_around_write) {
        m_around_write(true);
    }
    // A failed write means our own stdout is gone: the job's output has nowhere to go.
    write_all(stream.destination, tagged);
    if (m_around_write) {
        m_around_write(false);
    }
}

TaggedOutput::ReadResult TaggedOutput::copy_available(Stream& stream)
{
    std::array<char, 64 * 1024> chunk{};
    const auto got = ::read(stream.read_end.get(), chunk.data(), chunk.size());
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
        return ReadResult::nothing_yet;
    }
    if (got <= 0) {
        return ReadResult::ended;
    }
    stream.partial.append(chunk.data(), static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (auto newline = stream.partial.find('\n'); newline != std::string::npos;
         newline = stream.partial.find('\n', start)) {
        emit(stream, std::string_view(stream.partial).substr(start, newline - start));
        start = newline + 1;
    }
    stream.partial.erase(0, start);
    return ReadResult::copied;
}

void TaggedOutput::on_readable(int fd)
{
    const auto found = std::find_if(m_streams.begin(), m_streams.end(), [fd](const auto& stream) {
        return stream.read_end.get() == fd;
    });
    if (found == m_streams.end() || copy_available(*found) != ReadResult::ended) {
        return;
    }
    // End of the job's output: every writer, background ones included, has closed it.
    if (!found->partial.empty()) {
        emit(*found, found->partial);
    }
    m_streams.erase(found);
}

void TaggedOutput::drain()
{
    for (auto& stream : m_streams) {
        while (copy_available(stream) == ReadResult::copied) {
        }
        if (!stream.partial.empty()) {
            emit(stream, stream.partial);
        }
    }
    m_streams.clear();
}

} // namespace gpusched::sys
