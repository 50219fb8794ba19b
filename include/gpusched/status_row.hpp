#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// The control sequences (VT100, as xterm, VTE, tmux and the Linux console understand them)
// that keep a status line on the bottom row of a terminal while everything else scrolls
// above it, as apt draws its progress. A scroll region (DECSTBM) covering every row but the
// last makes all other output, gpusched's log and the jobs' own (written straight to the
// terminal, progress bars and all), scroll inside it: the status line is never glued into
// their lines, never pushed into the scrollback, and never has to be erased around a write
// it cannot see. Each sequence leaves the cursor where the output left it (saved and
// restored with DECSC and DECRC, which also keep the output's colours).

// Reserves the bottom row of a terminal of `rows` rows (at least 2). Any earlier region is
// given up first, so it serves again after a resize. An index (IND) and a cursor-up make sure
// the cursor, and the line it is on, end up above the reserved row: at the bottom, the line
// scrolls up by one, else nothing moves; unlike a newline, this keeps the cursor's column.
std::string reserve_bottom_row(unsigned rows);

// Draws `text` on the reserved bottom row, shown as visible_text does, cut to `columns` - 1
// characters (a character in the last column would leave the terminal waiting to wrap).
std::string draw_on_bottom_row(unsigned rows, unsigned columns, std::string_view text);

// Gives the whole screen back: the scroll region reset, the status line erased, the cursor
// visible (a job killed while it hid the cursor leaves it hidden).
std::string release_bottom_row(unsigned rows);

} // namespace gpusched
