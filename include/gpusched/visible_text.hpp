#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// Text from someone else (a command, a label, a user or host name, a directory) as a terminal
// may show it: what would act on the terminal instead of appearing on it is written as an
// escape, so that another user's command can neither retitle a window, clear a screen, ring
// a bell nor reorder a line. The scheme is systemd's (and `ls -b`'s), with `\e` for ESC:
//
//   \\         a backslash itself, so that every escape below is unambiguous
//   \a \b \t \n \v \f \r \e   BEL, BS, HT, LF, VT, FF, CR and ESC
//   \xHH       any other C0 control, DEL, and each byte that is not part of valid UTF-8
//              (raw C1 bytes 0x80-0x9f among them)
//   \uHHHH     a C1 control written as UTF-8 (U+0080-U+009F), and the bidirectional
//              formatting characters (Unicode's Bidi_Control: U+061C, U+200E, U+200F,
//              U+202A-U+202E, U+2066-U+2069), which reorder how the rest of a line reads
//
// Everything else, valid printable UTF-8 included, is kept as it is: names in any script stay
// readable. For people only: JSON, joblogs and what scripts read keep the exact text.
std::string visible_text(std::string_view text);

// A job's command as a listing shows it: shortened as the log does (shorten_command), then
// shown with visible_text.
std::string shown_command(std::string_view command);

} // namespace gpusched
