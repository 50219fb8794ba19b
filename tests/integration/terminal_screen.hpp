#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {

// Enough of a VT100 to check what gpusched does to a terminal: the screen's rows, the lines
// scrolled off its top, the cursor, the scroll region (DECSTBM), DECSC/DECRC, IND, cursor
// moves and erasing. Sequences it does not know are skipped; colours are ignored.
class TerminalScreen {
public:
    TerminalScreen(unsigned rows, unsigned columns);

    void feed(std::string_view bytes);
    // As a terminal does when resized: rows added or taken at the bottom, the region reset.
    void resize(unsigned rows, unsigned columns);

    unsigned rows() const { return m_rows; }
    std::string row(unsigned index) const; // 1-based, trailing blanks dropped
    std::string bottom_row() const { return row(m_rows); }
    // Lines scrolled off the top, then the screen's rows, trailing blanks dropped.
    std::vector<std::string> all_lines() const;
    // The scroll region's first and last rows (1-based).
    unsigned region_top() const { return m_top; }
    unsigned region_bottom() const { return m_bottom; }
    bool whole_screen_scrolls() const { return m_top == 1 && m_bottom == m_rows; }
    bool cursor_visible() const { return m_cursor_visible; }
    unsigned cursor_row() const { return m_row + 1; }

private:
    void put(char c);
    void line_feed();
    void control_sequence(std::string_view parameters, char final_byte);
    void scroll_up();

    unsigned m_rows;
    unsigned m_columns;
    std::vector<std::string> m_screen;
    std::vector<std::string> m_scrolled_off;
    unsigned m_row = 0; // 0-based
    unsigned m_column = 0;
    unsigned m_top = 1; // 1-based, as DECSTBM counts
    unsigned m_bottom;
    unsigned m_saved_row = 0;
    unsigned m_saved_column = 0;
    bool m_cursor_visible = true;
    std::string m_pending; // an escape sequence cut by the end of a read
};

} // namespace gpusched::testing
