#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace gpusched::sys {

class ProgressLine;

// gpusched's own writes to stderr (the log, the progress line) never block, so a reader that
// stalls (a full pipe, a terminal stopped with Ctrl-S) never stops scheduling or signal
// handling. fd 2 itself stays blocking, as the jobs share its open file description: a pipe
// or terminal is opened again through /proc/self/fd/2, non-blocking, for gpusched alone; a
// socket (journald) is written with MSG_DONTWAIT.
class StderrWriter {
public:
    StderrWriter();

    enum class Written {
        whole,   // or will be: the reader took a part, the rest goes first next time
        dropped, // the reader is not reading now
        gone,    // nobody will ever read it (a closed pipe)
    };
    Written write(std::string_view bytes);
    // The same, waiting up to `within` for a reader that does not take it now: for what must
    // not be dropped, and is written where waiting a little stalls nothing (the terminal given
    // back at the end). True once all of it is written.
    bool write_within(std::string_view bytes, std::chrono::milliseconds within);

private:
    // Bytes written, or -1 with errno.
    long write_some(std::string_view bytes);

    UniqueFd m_own;
    int m_fd;
    bool m_socket = false;
    bool m_poll_first = false; // where stderr could not be opened again
    std::string m_unfinished;
};

// The writer of fd 2, made on first use.
StderrWriter& stderr_writer();

// The log's sink: spdlog's formatting, warnings and errors coloured as spdlog's colour sink
// does, the progress line stepped around. A line stderr cannot take now is dropped and
// counted, and the next line that gets through is preceded by how many were dropped.
class StderrSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
    explicit StderrSink(bool colour) : m_colour(colour) {}

    void set_progress_line(std::shared_ptr<ProgressLine> line) { m_progress = std::move(line); }

protected:
    void sink_it_(const spdlog::details::log_msg& message) override;
    void flush_() override {}

private:
    StderrWriter::Written write_message(const spdlog::details::log_msg& message);

    bool m_colour;
    std::shared_ptr<ProgressLine> m_progress;
    std::size_t m_dropped = 0;
};

} // namespace gpusched::sys
