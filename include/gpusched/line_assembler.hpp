#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// One command as written in the input, after the line rules have been applied.
struct LogicalLine {
    std::string text;
    std::size_t first_line = 0; // 1-based physical line where the command starts
    bool has_nul = false;       // cannot be passed to exec; the caller rejects it
};

// Turns a byte stream into commands, one per line:
// - blank lines and lines whose first non-blank character is '#' are skipped;
// - a trailing '\r' is dropped (files written on Windows);
// - a line ending in an odd number of backslashes continues on the next line: the last
//   backslash and the newline are removed, as the shell does outside quotes;
// - bytes are passed through unchanged, whatever their encoding.
// Bytes are fed in chunks of any size; lines are taken out one at a time so that a caller
// can bound how far it reads ahead.
class LineAssembler {
public:
    void feed(std::string_view bytes);
    // The input has ended: a last line without a newline still counts.
    void end_of_input();
    // A writer has gone (the last writer of a named pipe closed it) and another may follow: a
    // command it left unfinished, a line without its newline or one continued with a
    // backslash, ends here rather than run on into the next writer's first line. True when
    // a command was left unfinished.
    bool end_line();
    // The next complete command, or nothing until more bytes are fed.
    std::optional<LogicalLine> next();
    // True when the input has ended and every command has been taken out.
    bool exhausted() const;

private:
    std::optional<std::string_view> next_physical_line();
    void compact();

    std::string m_buffer;
    std::size_t m_consumed = 0; // bytes of m_buffer already turned into lines
    std::size_t m_scanned = 0;  // bytes of m_buffer known to hold no newline
    std::size_t m_line_number = 0;
    bool m_ended = false;

    std::string m_pending; // a command continued with a backslash
    std::size_t m_pending_first_line = 0;
    bool m_continuing = false;
};

} // namespace gpusched
