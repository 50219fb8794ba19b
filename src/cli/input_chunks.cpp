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
        pollfd ready{input.fd_to_poll(), POLLIN, 0};
        if (poll(&ready, 1, -1) < 0 && errno != EINTR) {
            sys::throw_errno("poll");
        }
        input.read_some();
    }
    return lines;
}

} // namespace gpusched::cli
