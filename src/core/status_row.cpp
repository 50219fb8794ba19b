#include <gpusched/status_row.hpp>
#include <gpusched/visible_text.hpp>

#include <fmt/format.h>

namespace gpusched {
namespace {

constexpr std::string_view k_save_cursor = "\0337";    // DECSC
constexpr std::string_view k_restore_cursor = "\0338"; // DECRC
constexpr std::string_view k_whole_screen = "\033[r";  // DECSTBM with no margins
constexpr std::string_view k_index = "\033D";          // IND: down a line, scrolling at the bottom
constexpr std::string_view k_cursor_up = "\033[A";
constexpr std::string_view k_plain = "\033[m";
constexpr std::string_view k_erase_to_end = "\033[K";
constexpr std::string_view k_show_cursor = "\033[?25h";

} // namespace

std::string reserve_bottom_row(unsigned rows)
{
    // DECSTBM moves the cursor to the top left: it is saved around it.
    return fmt::format("{0}{1}{2}{3}{0}\033[1;{4}r{2}{5}", k_save_cursor, k_whole_screen,
                       k_restore_cursor, k_index, rows - 1, k_cursor_up);
}

std::string draw_on_bottom_row(unsigned rows, unsigned columns, std::string_view text)
{
    // The line names other users (whose run holds the GPU waited for): nothing in it may act
    // on the terminal, least of all between the sequences that keep the row in place.
    auto shown = visible_text(text);
    if (columns > 1 && shown.size() >= columns) {
        shown.resize(columns - 1);
    }
    return fmt::format("{}\033[{};1H{}{}{}{}", k_save_cursor, rows, k_plain, k_erase_to_end, shown,
                       k_restore_cursor);
}

std::string release_bottom_row(unsigned rows)
{
    return fmt::format("{}{}\033[{};1H{}{}{}", k_save_cursor, k_whole_screen, rows, k_erase_to_end,
                       k_restore_cursor, k_show_cursor);
}

} // namespace gpusched
