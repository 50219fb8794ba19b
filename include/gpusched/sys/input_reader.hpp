#pragma once

#include <gpusched/line_assembler.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

// Reads the inputs in order: files, stdin ("-"), and named pipes. A named pipe is a live
// queue: the reader keeps a write end open itself, so a writer closing it is not the end of
// the input, and the scheduler runs until it is signalled. Reading is driven from outside:
// the event loop polls fd_to_poll() and calls read_some() when it is readable, and only
// while the scheduler wants more commands, which bounds read-ahead.
class InputReader final : public CommandInput {
public:
    // Opens every input now, so a missing file is reported before any job runs. With no
    // paths and no fifo, reads stdin. `fifo` is created (mode 0600) when missing.
    InputReader(const std::vector<std::string>& paths, const std::optional<std::string>& fifo);

    std::optional<InputLine> next_line() override;
    // The descriptor to wait on for more input; -1 once every input has ended.
    int fd_to_poll() const;
    // One read(2) from the current input; marks it ended at end of file.
    void read_some();
    bool finished() const override { return m_current == m_sources.size(); }
    // True when any input is a pipe or FIFO.
    bool has_unrepeatable_input() const override;
    // Including a last unterminated line.
    std::vector<InputLine> take_buffered() override;

    void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) override;
    bool on_ready(const pollfd& ready) override;

private:
    struct Source {
        std::string name;
        UniqueFd fd;
        UniqueFd keep_open; // our own write end of a named pipe
        bool seekable = false;
        bool ended = false;
        LineAssembler lines;
    };

    void add_stdin();
    void add_path(const std::string& path);
    void add_fifo(const std::string& path, bool create);

    std::vector<Source> m_sources;
    std::size_t m_current = 0;
    std::vector<char> m_chunk;
};

} // namespace gpusched::sys
