#include <gpusched/line_assembler.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

namespace gpusched {
namespace {

constexpr std::string_view k_blank_chars = " \t\r\f\v";

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

LogicalLine make_line(std::string text, std::size_t first_line)
{
    const bool has_nul = text.find('\0') != std::string::npos;
    return LogicalLine{std::move(text), first_line, has_nul};
}

} // namespace

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
    return m_ended && m_consumed == m_buffer.size() && !m_continuing;
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
}

std::optional<std::string_view> LineAssembler::next_physical_line()
{
    const std::string_view buffer = m_buffer;
    const auto newline = buffer.find('\n', std::max(m_scanned, m_consumed));
    std::size_t end = newline;
    std::size_t next_start = newline + 1;
    if (newline == std::string_view::npos) {
        m_scanned = buffer.size();
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
    while (auto line = next_physical_line()) {
        if (!m_continuing) {
            if (is_skipped(*line)) {
                continue;
            }
            m_pending_first_line = m_line_number;
        }
        if (ends_with_continuation(*line)) {
            line->remove_suffix(1);
            m_pending.append(*line);
            m_continuing = true;
            continue;
        }
        m_pending.append(*line);
        m_continuing = false;
        return make_line(std::exchange(m_pending, {}), m_pending_first_line);
    }
    // A backslash on the very last line has nothing to continue onto.
    if (m_ended && m_continuing && m_consumed == m_buffer.size()) {
        m_continuing = false;
        return make_line(std::exchange(m_pending, {}), m_pending_first_line);
    }
    return std::nullopt;
}

} // namespace gpusched
