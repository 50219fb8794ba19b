#include "input_chunks.hpp"

#include <gpusched/sys/system_error.hpp>

#include <poll.h>

#include <cerrno>

namespace gpusched::cli {

std::vector<sys::InputLine> read_chunk(sys::InputReader& input, std::size_t count)
{
    std::vector<sys::InputLine> lines;
    while (lines.size() < count) {
        if (auto line = input.next_line()) {
            lines.push_back(std::move(*line));
            continue;
        }
        if (input.finished()) {
            break;
        }
        // What came is queued as soon as no more waits to be read: a producer that writes
        // a command now and then sees each queued at once, a file or a fast pipe goes in
        // chunks of `count`.
        pollfd ready{input.fd_to_poll(), POLLIN, 0};
        const int got = poll(&ready, 1, lines.empty() ? -1 : 0);
        if (got < 0 && errno != EINTR) {
            sys::throw_errno("poll");
        }
        if (got == 0) {
            break;
        }
        input.read_some();
    }
    return lines;
}

} // namespace gpusched::cli
