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

// A partial line longer than this goes out as a piece of its own, so a job that never ends
// a line (a stream of bytes, a progress bar) costs bounded memory and is seen as it runs.
constexpr std::size_t k_longest_piece = 64 * 1024;

// Where to cut `text` at most `limit` bytes in: not inside a UTF-8 character, when it can
// be helped.
std::size_t piece_end(std::string_view text, std::size_t limit)
{
    const auto is_continuation = [&](std::size_t at) {
        return (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
    };
    std::size_t end = limit;
    while (end > limit - 3 && end < text.size() && is_continuation(end)) {
        --end;
    }
    return end < text.size() && is_continuation(end) ? limit : end;
}

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

void TaggedOutput::emit(Stream& stream, std::string_view line, std::string_view end)
{
    // One buffer for every piece: no allocation per line.
    m_tagged.assign(stream.prefix).append(line).append(end);
    if (m_around_write) {
        m_around_write(true);
    }
    // A failed write means our own stdout is gone: the job's output has nowhere to go.
    write_all(stream.destination, m_tagged);
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
    emit_pieces(stream);
    return ReadResult::copied;
}

// Emits each complete piece of `stream.partial`: a line ended by '\n' or "\r\n", or one ended
// by '\r' alone, which a progress bar redraws in place (it keeps its '\r', so the terminal
// still does), or the first k_longest_piece bytes of a longer line, ended with a newline.
void TaggedOutput::emit_pieces(Stream& stream)
{
    const std::string_view partial = stream.partial;
    std::size_t start = 0;
    while (true) {
        const auto end = partial.find_first_of("\r\n", start);
        // A '\r' that came last may be the start of "\r\n": it waits for the next byte.
        const bool complete =
            end != std::string_view::npos && (partial[end] == '\n' || end + 1 < partial.size());
        if ((complete ? end : partial.size()) - start > k_longest_piece) {
            const auto piece = piece_end(partial.substr(start), k_longest_piece);
            emit(stream, partial.substr(start, piece), "\n");
            start += piece;
            continue;
        }
        if (!complete) {
            break;
        }
        if (partial[end] == '\n') {
            emit(stream, partial.substr(start, end - start), "\n");
            start = end + 1;
        } else if (partial[end + 1] == '\n') {
            emit(stream, partial.substr(start, end - start), "\r\n");
            start = end + 2;
        } else {
            if (end > start) { // a lone '\r' after a line end moves nothing
                emit(stream, partial.substr(start, end - start), "\r");
            }
            start = end + 1;
        }
    }
    stream.partial.erase(0, start);
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
        emit(*found, found->partial, "\n");
    }
    m_streams.erase(found);
}

void TaggedOutput::drain()
{
    for (auto& stream : m_streams) {
        while (copy_available(stream) == ReadResult::copied) {
        }
        if (!stream.partial.empty()) {
            emit(stream, stream.partial, "\n");
        }
    }
    m_streams.clear();
}

} // namespace gpusched::sys
