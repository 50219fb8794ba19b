#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// Commands longer than this are refused: far beyond any real command (those above 64 KiB
// already reach the shell as a script), it keeps an input without newlines from filling memory.
inline constexpr std::size_t k_longest_command = 16 * 1024 * 1024;

// Why a command of the input cannot be run.
enum class LineFault {
    none,
    nul_byte, // exec cannot pass it
    too_long, // over the assembler's limit
};

// "the command contains a NUL byte", for `job N not run: ...`.
std::string describe_fault(LineFault fault);

// One command as written in the input, after the line rules have been applied.
struct LogicalLine {
    std::string text;           // empty when the command has a fault
    std::size_t first_line = 0; // 1-based physical line where the command starts
    LineFault fault = LineFault::none;
};

// Turns a byte stream into commands, one per line:
// - blank lines and lines whose first non-blank character is '#' are skipped;
// - a trailing '\r' is dropped (files written on Windows);
// - a line ending in an odd number of backslashes continues on the next line: the last
//   backslash and the newline are removed, as the shell does outside quotes;
// - bytes are passed through unchanged, whatever their encoding.
// Bytes are fed in chunks of any size; lines are taken out one at a time so that a caller
// can bound how far it reads ahead.
// A command that can never run (a NUL byte, more than `longest_command` bytes) is handed out
// as soon as that is known, with its fault and no text, and the rest of it is dropped as it
// streams in: memory stays bounded whatever the input.
class LineAssembler {
public:
    explicit LineAssembler(std::size_t longest_command = k_longest_command)
        : m_longest(longest_command)
    {
    }

    void feed(std::string_view bytes);
    // The input has ended: a last line without a newline still counts.
    void end_of_input();
    // A writer has gone (the last writer of a named pipe closed it) and another may follow: a
    // command it left unfinished, a line without its newline or one continued with a
    // backslash, ends here rather than run on into the next writer's first line. True when
    // a command was left unfinished.
    bool end_line();
    // The next complete command (or faulty one), or nothing until more bytes are fed.
    std::optional<LogicalLine> next();
    // True when the input has ended and every command has been taken out.
    bool exhausted() const;
    // Bytes held: at most the longest command plus what one feed brings, once next() has
    // been called after each feed.
    std::size_t held_bytes() const { return m_buffer.size() + m_pending.size(); }

private:
    // What a line being dropped turns out to be: only a command is reported.
    enum class Dropping { nothing, comment, blank, command };

    // Whether a physical line ends in an odd number of backslashes (before a '\r'), known
    // from its bytes seen one piece at a time.
    class ContinuationTail {
    public:
        void add(std::string_view bytes);
        bool continues() const { return m_ends_with_cr ? m_odd_before_cr : m_odd; }

    private:
        bool m_odd = false;
        bool m_odd_before_cr = false;
        bool m_ends_with_cr = false;
    };

    std::optional<std::string_view> next_physical_line();
    std::optional<LogicalLine> check_partial_line();
    std::optional<LogicalLine> drop_some();
    void compact();

    std::size_t m_longest;
    std::string m_buffer;
    std::size_t m_consumed = 0; // bytes of m_buffer already turned into lines
    std::size_t m_scanned = 0;  // bytes of m_buffer known to hold no newline and no NUL
    std::size_t m_line_number = 0;
    bool m_ended = false;

    std::string m_pending; // a command continued with a backslash
    std::size_t m_pending_first_line = 0;
    bool m_continuing = false;

    Dropping m_dropping = Dropping::nothing;
    ContinuationTail m_tail;
};

} // namespace gpusched
