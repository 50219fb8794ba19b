#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <poll.h>

#include <functional>
#include <string>
#include <vector>

namespace gpusched::sys {

// --tag: jobs write into pipes, and gpusched copies each complete line to its own stdout or
// stderr behind a prefix naming the job and GPU. A line is written with one write(2), so
// lines of different jobs never mix within a line; a last line without a newline gets one.
// A carriage return ends a piece too (a progress bar redrawn in place is shown as it goes),
// and a line longer than 64 KiB goes out in pieces of 64 KiB, so memory stays bounded.
class TaggedOutput {
public:
    // Called before and after each write, so a progress line can step aside.
    explicit TaggedOutput(std::function<void(bool writing)> around_write = {})
        : m_around_write(std::move(around_write))
    {
    }

    struct WriteEnds {
        UniqueFd out;
        UniqueFd err;
    };
    // Pipes for one job whose lines start with `prefix`; the caller gives the write ends to
    // the job and closes its copies.
    WriteEnds open(const std::string& prefix);

    void add_poll_fds(std::vector<pollfd>& fds) const;
    // Copies what is readable on `fd`, one of this object's pipes.
    void on_readable(int fd);
    // Copies everything still readable, then ends each partial line: for the end of the run,
    // when jobs have exited but their last output may still sit in the pipes.
    void drain();

private:
    struct Stream {
        UniqueFd read_end;
        int destination = 1;
        std::string prefix;
        std::string partial;
    };

    // Writes prefix, `line` and `end` ("\n", "\r\n" or "\r") at once.
    void emit(Stream& stream, std::string_view line, std::string_view end);
    void emit_pieces(Stream& stream);
    enum class ReadResult { copied, nothing_yet, ended };
    // Reads once from `stream` and copies its complete lines.
    ReadResult copy_available(Stream& stream);

    std::vector<Stream> m_streams;
    std::function<void(bool)> m_around_write;
    std::string m_tagged; // the piece being written
};

} // namespace gpusched::sys
