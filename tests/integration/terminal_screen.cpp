#include "terminal_screen.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace gpusched::testing {
namespace {

std::vector<unsigned> numbers(std::string_view parameters)
{
    std::vector<unsigned> values;
    std::string text(parameters);
    std::istringstream fields(text);
    for (std::string field; std::getline(fields, field, ';');) {
        values.push_back(field.empty() ? 0u : static_cast<unsigned>(std::atoi(field.c_str())));
    }
    return values;
}

unsigned nth(const std::vector<unsigned>& values, std::size_t index, unsigned fallback)
{
    return index < values.size() && values[index] != 0 ? values[index] : fallback;
}

std::string trimmed(std::string line)
{
    line.erase(line.find_last_not_of(' ') + 1);
    return line;
}

} // namespace

TerminalScreen::TerminalScreen(unsigned rows, unsigned columns)
    : m_rows(rows), m_columns(columns), m_screen(rows, std::string(columns, ' ')), m_bottom(rows)
{
}

void TerminalScreen::resize(unsigned rows, unsigned columns)
{
    for (auto& line : m_screen) {
        line.resize(columns, ' ');
    }
    while (m_screen.size() > rows) { // the cursor's line stays on the screen
        if (m_row > 0) {
            m_scrolled_off.push_back(m_screen.front());
            m_screen.erase(m_screen.begin());
            --m_row;
        } else {
            m_screen.pop_back();
        }
    }
    m_screen.resize(rows, std::string(columns, ' '));
    m_rows = rows;
    m_columns = columns;
    m_top = 1;
    m_bottom = rows;
    m_row = std::min(m_row, rows - 1);
    m_column = std::min(m_column, columns - 1);
}

std::string TerminalScreen::row(unsigned index) const
{
    return trimmed(m_screen.at(index - 1));
}

std::vector<std::string> TerminalScreen::all_lines() const
{
    std::vector<std::string> lines;
    for (const auto& line : m_scrolled_off) {
        lines.push_back(trimmed(line));
    }
    for (const auto& line : m_screen) {
        lines.push_back(trimmed(line));
    }
    return lines;
}

void TerminalScreen::scroll_up()
{
    // Only a region that starts at the top sends its lines to the scrollback, as xterm does.
    if (m_top == 1) {
        m_scrolled_off.push_back(m_screen[0]);
    }
    m_screen.erase(m_screen.begin() + (m_top - 1));
    m_screen.insert(m_screen.begin() + (m_bottom - 1), std::string(m_columns, ' '));
}

void TerminalScreen::line_feed()
{
    if (m_row + 1 == m_bottom) {
        scroll_up();
    } else if (m_row + 1 < m_rows) {
        ++m_row;
    }
}

void TerminalScreen::put(char c)
{
    if (m_column >= m_columns) { // wrap
        m_column = 0;
        line_feed();
    }
    m_screen[m_row][m_column++] = c;
}

void TerminalScreen::control_sequence(std::string_view parameters, char final_byte)
{
    if (!parameters.empty() && parameters.front() == '?') {
        if (parameters == "?25" && (final_byte == 'h' || final_byte == 'l')) {
            m_cursor_visible = final_byte == 'h';
        }
        return;
    }
    const auto values = numbers(parameters);
    switch (final_byte) {
    case 'H':
    case 'f':
        m_row = std::min(nth(values, 0, 1), m_rows) - 1;
        m_column = std::min(nth(values, 1, 1), m_columns) - 1;
        break;
    case 'A': {
        // Up to the region's top from within it, else up to the screen's.
        const unsigned count = nth(values, 0, 1);
        const unsigned highest = m_row >= m_top - 1 ? m_top - 1 : 0;
        m_row = m_row >= highest + count ? m_row - count : highest;
        break;
    }
    case 'B':
        m_row = std::min(m_row + nth(values, 0, 1), m_rows - 1);
        break;
    case 'C':
        m_column = std::min(m_column + nth(values, 0, 1), m_columns - 1);
        break;
    case 'D':
        m_column -= std::min(m_column, nth(values, 0, 1));
        break;
    case 'G':
        m_column = std::min(nth(values, 0, 1), m_columns) - 1;
        break;
    case 'K': {
        const unsigned mode = values.empty() ? 0 : values[0];
        auto& line = m_screen[m_row];
        if (mode == 0) {
            std::fill(line.begin() + m_column, line.end(), ' ');
        } else if (mode == 1) {
            std::fill(line.begin(), line.begin() + m_column + 1, ' ');
        } else {
            std::fill(line.begin(), line.end(), ' ');
        }
        break;
    }
    case 'J':
        if ((values.empty() ? 0 : values[0]) == 0) {
            std::fill(m_screen[m_row].begin() + m_column, m_screen[m_row].end(), ' ');
            for (unsigned row = m_row + 1; row < m_rows; ++row) {
                m_screen[row].assign(m_columns, ' ');
            }
        }
        break;
    case 'r': {
        const unsigned top = nth(values, 0, 1);
        const unsigned bottom = std::min(nth(values, 1, m_rows), m_rows);
        if (top < bottom) {
            m_top = top;
            m_bottom = bottom;
            m_row = 0; // DECSTBM homes the cursor
            m_column = 0;
        }
        break;
    }
    default:
        break; // colours and the rest
    }
}

void TerminalScreen::feed(std::string_view bytes)
{
    std::string input = m_pending + std::string(bytes);
    m_pending.clear();
    std::size_t i = 0;
    while (i < input.size()) {
        const char c = input[i];
        if (c != '\033') {
            if (c == '\r') {
                m_column = 0;
            } else if (c == '\n') {
                line_feed();
            } else if (c == '\b') {
                m_column -= m_column > 0 ? 1 : 0;
            } else if (static_cast<unsigned char>(c) >= 0x20) {
                put(c);
            }
            ++i;
            continue;
        }
        if (i + 1 >= input.size()) {
            m_pending = input.substr(i);
            return;
        }
        const char kind = input[i + 1];
        if (kind == '[') {
            std::size_t end = i + 2;
            while (end < input.size() && (input[end] < 0x40 || input[end] > 0x7e)) {
                ++end;
            }
            if (end >= input.size()) {
                m_pending = input.substr(i);
                return;
            }
            control_sequence(std::string_view(input).substr(i + 2, end - i - 2), input[end]);
            i = end + 1;
            continue;
        }
        if (kind == '7') {
            m_saved_row = m_row;
            m_saved_column = m_column;
        } else if (kind == '8') {
            m_row = m_saved_row;
            m_column = m_saved_column;
        } else if (kind == 'D') {
            line_feed();
        } else if (kind == 'M') {
            if (m_row + 1 == m_top) {
                m_screen.erase(m_screen.begin() + (m_bottom - 1));
                m_screen.insert(m_screen.begin() + (m_top - 1), std::string(m_columns, ' '));
            } else if (m_row > 0) {
                --m_row;
            }
        }
        i += 2;
    }
}

} // namespace gpusched::testing
