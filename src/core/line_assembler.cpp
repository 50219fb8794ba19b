#include <gpusched/line_assembler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace gpusched {
namespace {

constexpr std::string_view k_blank_chars = " \t\r\f\v";

// A line not yet complete may still lose a trailing backslash and '\r' to the line rules.
constexpr std::size_t k_line_end_slack = 2;

// Above this, a buffer that holds little gives its memory back (after a very long command).
constexpr std::size_t k_kept_capacity = 1024 * 1024;

bool is_skipped(std::string_view line)
{
    const auto first = line.find_first_not_of(k_blank_chars);
    return first == std::string_view::npos || line[first] == '#';
}

bool ends_with_continuation(std::string_view line)
{
    const auto last_other = line.find_last_not_of('\\');
    const auto backslashes =
        last_other == std::string_view::npos ? line.size() : line.size() - last_other - 1;
    return backslashes % 2 == 1;
}

} // namespace

std::string describe_fault(LineFault fault)
{
    switch (fault) {
    case LineFault::none:
        break;
    case LineFault::nul_byte:
        return "the command contains a NUL byte";
    case LineFault::too_long:
        return fmt::format("the command is longer than {} MiB", k_longest_command >> 20);
    }
    return "";
}

void LineAssembler::ContinuationTail::add(std::string_view bytes)
{
    // Whatever came before the last byte that is neither a backslash nor '\r' no longer counts.
    const auto last_other = bytes.find_last_not_of("\\\r");
    if (last_other != std::string_view::npos) {
        *this = {};
        bytes.remove_prefix(last_other + 1);
    }
    for (const char byte : bytes) {
        if (byte == '\\') {
            m_odd = !m_odd; // a '\r' before it has already ended the previous run
            m_ends_with_cr = false;
        } else {
            m_odd_before_cr = m_odd;
            m_odd = false;
            m_ends_with_cr = true;
        }
    }
}

void LineAssembler::feed(std::string_view bytes)
{
    compact();
    m_buffer.append(bytes);
}

void LineAssembler::end_of_input()
{
    m_ended = true;
}

bool LineAssembler::end_line()
{
    // Lines not taken out yet are still in the buffer: follow the rules over them to see
    // whether the last one leaves a command open.
    std::string_view rest = std::string_view(m_buffer).substr(m_consumed);
    bool continuing = m_continuing;
    for (auto newline = rest.find('\n'); newline != std::string_view::npos;
         newline = rest.find('\n')) {
        auto line = rest.substr(0, newline);
        rest.remove_prefix(newline + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (continuing || !is_skipped(line)) {
            continuing = ends_with_continuation(line);
        }
    }
    if (rest.empty() && !continuing) {
        return false;
    }
    // A blank or comment line left without its newline is ended too, but is no command.
    const bool command = continuing || !is_skipped(rest);
    feed("\n");
    return command;
}

bool LineAssembler::exhausted() const
{
    return m_ended && m_consumed == m_buffer.size() && !m_continuing &&
           m_dropping == Dropping::nothing;
}

// Drops the bytes already handed out, so the buffer holds at most one partial line plus
// the chunk being fed; scanning resumes where it stopped, so a long line costs linear time.
void LineAssembler::compact()
{
    if (m_consumed == 0) {
        return;
    }
    m_buffer.erase(0, m_consumed);
    m_scanned -= std::min(m_scanned, m_consumed);
    m_consumed = 0;
    if (m_buffer.capacity() > k_kept_capacity && m_buffer.size() < m_buffer.capacity() / 4) {
        m_buffer.shrink_to_fit();
    }
}

// The next complete physical line; at the end of the input, the last one even without a
// newline.
std::optional<std::string_view> LineAssembler::next_physical_line()
{
    const std::string_view buffer = m_buffer;
    const auto newline = buffer.find('\n', std::max(m_scanned, m_consumed));
    std::size_t end = newline;
    std::size_t next_start = newline + 1;
    if (newline == std::string_view::npos) {
        if (!m_ended || m_consumed == buffer.size()) {
            return std::nullopt;
        }
        end = buffer.size();
        next_start = buffer.size();
    }
    auto line = buffer.substr(m_consumed, end - m_consumed);
    m_consumed = next_start;
    ++m_line_number;
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    return line;
}

std::optional<LogicalLine> LineAssembler::next()
{
    while (true) {
        if (m_dropping != Dropping::nothing) {
            if (auto report = drop_some()) {
                return report;
            }
            if (m_dropping != Dropping::nothing) {
                return std::nullopt; // the rest of the line has yet to come
            }
            continue;
        }
        auto line = next_physical_line();
        if (!line) {
            break;
        }
        if (!m_continuing) {
            if (is_skipped(*line)) {
                continue;
            }
            m_pending_first_line = m_line_number;
        }
        const bool continues = ends_with_continuation(*line);
        if (continues) {
            line->remove_suffix(1);
        }
        LineFault fault = LineFault::none;
        if (line->find('\0') != std::string_view::npos) {
            fault = LineFault::nul_byte;
        } else if (m_pending.size() + line->size() > m_longest) {
            fault = LineFault::too_long;
        }
        if (fault != LineFault::none) {
            std::string().swap(m_pending);
            m_continuing = false;
            if (continues) {
                m_dropping = Dropping::command; // its continuation lines go with it
                m_tail = {};
            }
            return LogicalLine{{}, m_pending_first_line, fault};
        }
        m_pending.append(*line);
        if (continues) {
            m_continuing = true;
            continue;
        }
        m_continuing = false;
        return LogicalLine{std::exchange(m_pending, {}), m_pending_first_line, LineFault::none};
    }
    // A backslash on the very last line has nothing to continue onto.
    if (m_ended && m_continuing && m_consumed == m_buffer.size()) {
        m_continuing = false;
        return LogicalLine{std::exchange(m_pending, {}), m_pending_first_line, LineFault::none};
    }
    return check_partial_line();
}

// The line still coming in: once it holds a NUL byte or passes the limit, its bytes are
// dropped as they arrive, and a command is reported at once rather than at its newline.
std::optional<LogicalLine> LineAssembler::check_partial_line()
{
    const std::string_view buffer = m_buffer;
    const auto from = std::max(m_scanned, m_consumed);
    m_scanned = buffer.size();
    const auto partial = buffer.substr(m_consumed);
    const bool has_nul = buffer.find('\0', from) != std::string_view::npos;
    if (!has_nul && m_pending.size() + partial.size() <= m_longest + k_line_end_slack) {
        return std::nullopt;
    }
    m_dropping = Dropping::command;
    if (!m_continuing) {
        m_pending_first_line = m_line_number + 1;
        const auto first = partial.find_first_not_of(k_blank_chars);
        if (first == std::string_view::npos) {
            m_dropping = Dropping::blank; // skipped if nothing but blanks follows
        } else if (partial[first] == '#') {
            m_dropping = Dropping::comment;
        }
    }
    m_tail = {};
    m_tail.add(partial);
    m_consumed = buffer.size();
    std::string().swap(m_pending);
    m_continuing = false;
    if (m_dropping != Dropping::command) {
        return std::nullopt;
    }
    return LogicalLine{
        {}, m_pending_first_line, has_nul ? LineFault::nul_byte : LineFault::too_long};
}

// Drops what has come of the line being dropped, up to its newline; a blank line turns out
// to be a command (reported then) or a comment once its first other byte arrives.
std::optional<LogicalLine> LineAssembler::drop_some()
{
    const std::string_view rest = std::string_view(m_buffer).substr(m_consumed);
    const auto newline = rest.find('\n');
    const auto bytes = rest.substr(0, newline);
    std::optional<LogicalLine> report;
    if (m_dropping == Dropping::blank) {
        const auto first = bytes.find_first_not_of(k_blank_chars);
        if (first != std::string_view::npos && bytes[first] == '#') {
            m_dropping = Dropping::comment;
        } else if (first != std::string_view::npos) {
            m_dropping = Dropping::command;
            report = LogicalLine{{}, m_pending_first_line, LineFault::too_long};
        }
    }
    m_tail.add(bytes);
    if (newline == std::string_view::npos) {
        m_consumed = m_buffer.size();
        if (m_ended) {
            m_dropping = Dropping::nothing; // the input ended within the line
        }
        return report;
    }
    m_consumed += newline + 1;
    ++m_line_number;
    // Comments do not continue; a command does, as it would have if it could run.
    if (m_dropping != Dropping::command || !m_tail.continues()) {
        m_dropping = Dropping::nothing;
    }
    m_tail = {};
    return report;
}

} // namespace gpusched
