// How other users' text is shown on a terminal: what would act on the terminal is written as
// an escape, and everything else is kept.
#include <gpusched/visible_text.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

using namespace std::string_literals;

TEST(VisibleText, PrintableAsciiIsKept)
{
    EXPECT_EQ(visible_text(""), "");
    EXPECT_EQ(visible_text("python train.py --lr 0.1 'a b' \"c\" $HOME ~/x"),
              "python train.py --lr 0.1 'a b' \"c\" $HOME ~/x");
}

TEST(VisibleText, EscapeIsShownAsBackslashE)
{
    EXPECT_EQ(visible_text("\033]0;pwned\007"), "\\e]0;pwned\\a");
    EXPECT_EQ(visible_text("\033[2Jclear"), "\\e[2Jclear");
}

TEST(VisibleText, TheCommonControlsHaveTheirCNames)
{
    EXPECT_EQ(visible_text("\a\b\t\n\v\f\r"), "\\a\\b\\t\\n\\v\\f\\r");
    EXPECT_EQ(visible_text("echo a\necho b"), "echo a\\necho b");
}

TEST(VisibleText, OtherControlsAndDeleteAreHex)
{
    EXPECT_EQ(visible_text("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
    EXPECT_EQ(visible_text("a\0b"s), "a\\x00b");
}

TEST(VisibleText, ABackslashIsDoubledSoThatEscapesAreUnambiguous)
{
    EXPECT_EQ(visible_text("printf '\\033'"), "printf '\\\\033'");
    // The text `\e` and the byte ESC do not look alike.
    EXPECT_NE(visible_text("\\e"), visible_text("\033"));
}

TEST(VisibleText, PrintableUtf8IsKept)
{
    EXPECT_EQ(visible_text("训练 模型"), "训练 模型");
    EXPECT_EQ(visible_text("café naïve"), "café naïve");
    EXPECT_EQ(visible_text("emoji \xf0\x9f\x9a\x80"), "emoji \xf0\x9f\x9a\x80");
    EXPECT_EQ(visible_text("\u00a0\u00ff\u0100"), "\u00a0\u00ff\u0100") << "after the C1 range";
}

TEST(VisibleText, C1ControlsInUtf8AreCodePoints)
{
    // U+009B is CSI, U+0085 NEL: some terminals act on them as on ESC [ and a newline.
    EXPECT_EQ(visible_text("\xc2\x9b"
                           "2J"),
              "\\u009b2J");
    EXPECT_EQ(visible_text("\xc2\x80\xc2\x85\xc2\x9f"), "\\u0080\\u0085\\u009f");
}

TEST(VisibleText, RawC1BytesAndOtherInvalidBytesAreHex)
{
    EXPECT_EQ(visible_text("\x9b"
                           "2J"),
              "\\x9b2J");
    EXPECT_EQ(visible_text("\x80\xff\xfe"), "\\x80\\xff\\xfe");
    EXPECT_EQ(visible_text("latin-1 caf\xe9"), "latin-1 caf\\xe9");
}

TEST(VisibleText, MalformedUtf8IsHexByteByByte)
{
    EXPECT_EQ(visible_text("\xe8\xae"), "\\xe8\\xae") << "cut short";
    EXPECT_EQ(visible_text("\xe8\xae"
                           "x"),
              "\\xe8\\xaex")
        << "the next character is kept";
    EXPECT_EQ(visible_text("\xc0\xaf"), "\\xc0\\xaf") << "overlong '/'";
    EXPECT_EQ(visible_text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf") << "overlong, three bytes";
    EXPECT_EQ(visible_text("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
    EXPECT_EQ(visible_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80") << "above U+10FFFF";
    EXPECT_EQ(visible_text("\xc2\x1b"), "\\xc2\\e") << "a control is not swallowed";
}

TEST(VisibleText, BidiControlsAreCodePoints)
{
    // U+202E (RLO) would show the rest of the line right to left.
    EXPECT_EQ(visible_text("ls \u202etxt.exe"), "ls \\u202etxt.exe");
    EXPECT_EQ(visible_text("\u202a\u202b\u202c\u202d"), "\\u202a\\u202b\\u202c\\u202d");
    EXPECT_EQ(visible_text("\u2066\u2067\u2068\u2069"), "\\u2066\\u2067\\u2068\\u2069");
    EXPECT_EQ(visible_text("\u200e\u200f\u061c"), "\\u200e\\u200f\\u061c");
    EXPECT_EQ(visible_text("\u2065\u206a\u2029"), "\u2065\u206a\u2029") << "their neighbours";
}

TEST(VisibleText, AShownCommandIsShortenedThenMadeVisible)
{
    EXPECT_EQ(shown_command("echo \033[2J"), "echo \\e[2J");
    const auto shown = shown_command(std::string(300, '\a'));
    EXPECT_TRUE(shown.starts_with("\\a\\a")) << shown;
    EXPECT_TRUE(shown.ends_with("\\a... (60 more bytes)")) << shown;
}

} // namespace
} // namespace gpusched
