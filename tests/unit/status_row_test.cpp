#include <gpusched/status_row.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(StatusRow, ReservingScrollsEverythingButTheBottomRowAndKeepsTheCursorAboveIt)
{
    EXPECT_EQ(reserve_bottom_row(24), "\0337\033[r\0338\033D\0337\033[1;23r\0338\033[A");
}

TEST(StatusRow, DrawingGoesToTheBottomRowAndComesBack)
{
    EXPECT_EQ(draw_on_bottom_row(24, 80, "3 done, 1 running"),
              "\0337\033[24;1H\033[m\033[K3 done, 1 running\0338");
}

TEST(StatusRow, ALineAsWideAsTheTerminalIsCutShortOfTheLastColumn)
{
    EXPECT_EQ(draw_on_bottom_row(5, 6, "123456789"), "\0337\033[5;1H\033[m\033[K12345\0338");
    EXPECT_EQ(draw_on_bottom_row(5, 6, "12345"), "\0337\033[5;1H\033[m\033[K12345\0338");
}

TEST(StatusRow, ControlCharactersInTheLineAreShownNotSent)
{
    // Another user's name, from their lease record, is on the line: it must not move the
    // cursor out of the reserved row.
    EXPECT_EQ(draw_on_bottom_row(24, 80, "held by \033[1;1Hx"),
              "\0337\033[24;1H\033[m\033[Kheld by \\e[1;1Hx\0338");
}

TEST(StatusRow, ReleasingResetsTheRegionErasesTheLineAndShowsTheCursor)
{
    EXPECT_EQ(release_bottom_row(24), "\0337\033[r\033[24;1H\033[K\0338\033[?25h");
}

} // namespace
} // namespace gpusched
