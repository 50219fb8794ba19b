#pragma once

#include <gpusched/line_assembler.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// Reads the inputs in order: files, stdin ("-"), and named pipes. A named pipe is a live
// queue: writers may open it, write and close it any number of times, and it never ends; the
// scheduler runs until it is signalled. When its writers have all gone, a line one of them
// left without its newline ends there, and the pipe is opened afresh for the next ones.
// Reading is driven from outside: the event loop polls fd_to_poll() and calls read_some()
// when it is readable, and only while the scheduler wants more commands, which bounds
// read-ahead.
class InputReader final : public CommandSource {
public:
    // Opens every input now, so a missing file is reported before any job runs. With no
    // paths and no fifo, reads stdin. `fifo` is created (mode 0600) when missing.
    InputReader(const std::vector<std::string>& paths, const std::optional<std::string>& fifo);

    std::optional<InputLine> next_line() override;
    // The descriptor to wait on for more input; -1 once every input has ended.
    int fd_to_poll() const;
    // One read(2) from the current input; marks it ended at end of file.
    void read_some();
    bool finished() const override;
    // True when any input is a pipe or FIFO.
    bool has_unrepeatable_input() const override;
    void stop_reading() override;
    std::vector<InputLine> take_buffered() override;

    void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) override;
    bool on_ready(const pollfd& ready) override;

private:
    struct Source {
        std::string name;
        UniqueFd fd;
        bool seekable = false;
        bool live = false;     // a named pipe: its writers come and go
        bool is_stdin = false; // descriptor 0 reads it too
        LineAssembler lines;
        std::uint64_t bytes_read = 0;
        // Where in the stream the writers of a named pipe had all gone: a command they left
        // unfinished ends there. Bytes may be in the pipe still, unread, when that is seen.
        std::deque<std::uint64_t> writers_gone_at;
    };

    void add_stdin();
    void add_path(const std::string& path);
    void add_fifo(const std::string& path, bool create);
    // One read(2), never past the next place where writers had gone; true when bytes came.
    bool read_from(Source& source);
    void on_writers_gone(Source& source);
    void end_lines_of_gone_writers(Source& source);
    void reopen(Source& source);
    void read_what_is_written(Source& source);
    void close_source(Source& source);
    static std::uint64_t unread_bytes(const Source& source);
    static InputLine input_line(LogicalLine line, const Source& source);

    std::vector<Source> m_sources;
    std::size_t m_current = 0;
    std::vector<char> m_chunk;
    bool m_stopped = false;
    std::deque<InputLine> m_left;        // read before the stop, not taken yet
    std::vector<InputLine> m_unfinished; // lines a stop found still being written
};

} // namespace gpusched::sys
