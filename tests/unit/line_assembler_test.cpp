#include <gpusched/line_assembler.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpusched {
namespace {

using namespace std::string_literals;

std::vector<LogicalLine> assemble(std::string_view input, std::size_t chunk = 0,
                                  std::size_t longest = k_longest_command)
{
    LineAssembler assembler(longest);
    std::vector<LogicalLine> lines;
    if (chunk == 0) {
        chunk = input.size() == 0 ? 1 : input.size();
    }
    for (std::size_t at = 0; at < input.size(); at += chunk) {
        assembler.feed(input.substr(at, chunk));
        while (auto line = assembler.next()) {
            lines.push_back(std::move(*line));
        }
    }
    assembler.end_of_input();
    while (auto line = assembler.next()) {
        lines.push_back(std::move(*line));
    }
    EXPECT_TRUE(assembler.exhausted());
    return lines;
}

std::vector<std::string> texts(const std::vector<LogicalLine>& lines)
{
    std::vector<std::string> result;
    for (const auto& line : lines) {
        result.push_back(line.text);
    }
    return result;
}

using Texts = std::vector<std::string>;

TEST(LineAssembler, OneCommandPerLine)
{
    EXPECT_EQ(texts(assemble("a\nb c\n")), (Texts{"a", "b c"}));
}

TEST(LineAssembler, LastLineWithoutNewlineCounts)
{
    EXPECT_EQ(texts(assemble("a\nb")), (Texts{"a", "b"}));
}

TEST(LineAssembler, SkipsBlankAndCommentLines)
{
    const auto lines = assemble("\n   \n\t\n# note\n  # indented note\necho #not a comment\n");
    EXPECT_EQ(texts(lines), (Texts{"echo #not a comment"}));
    EXPECT_EQ(lines[0].first_line, 6u);
}

TEST(LineAssembler, DropsTrailingCarriageReturn)
{
    EXPECT_EQ(texts(assemble("a\r\nb\r\n\r\n")), (Texts{"a", "b"}));
}

TEST(LineAssembler, BackslashContinuesOnNextLine)
{
    const auto lines = assemble("python train.py \\\n  --lr 0.1 \\\r\n  --bs 32\nnext\n");
    EXPECT_EQ(texts(lines), (Texts{"python train.py   --lr 0.1   --bs 32", "next"}));
    EXPECT_EQ(lines[0].first_line, 1u);
    EXPECT_EQ(lines[1].first_line, 4u);
}

TEST(LineAssembler, EscapedBackslashDoesNotContinue)
{
    EXPECT_EQ(texts(assemble("echo a\\\\\necho b\n")), (Texts{"echo a\\\\", "echo b"}));
}

TEST(LineAssembler, ContinuationKeepsLinesThatLookLikeComments)
{
    EXPECT_EQ(texts(assemble("echo \\\n# not skipped\n")), (Texts{"echo # not skipped"}));
}

TEST(LineAssembler, BackslashOnLastLineEndsTheCommand)
{
    EXPECT_EQ(texts(assemble("echo a \\")), (Texts{"echo a "}));
}

TEST(LineAssembler, CommentLinesDoNotContinue)
{
    EXPECT_EQ(texts(assemble("# comment \\\necho a\n")), (Texts{"echo a"}));
}

// Each writer's visit is fed, then end_line(); what end_line() returned for each, and the
// commands.
std::pair<std::vector<bool>, Texts> writers(const std::vector<std::string>& visits,
                                            bool take_between = true)
{
    LineAssembler assembler;
    std::vector<bool> unfinished;
    Texts lines;
    const auto take = [&] {
        while (auto line = assembler.next()) {
            lines.push_back(line->text);
        }
    };
    for (const auto& visit : visits) {
        assembler.feed(visit);
        if (take_between) {
            take();
        }
        unfinished.push_back(assembler.end_line());
    }
    take();
    return {unfinished, lines};
}

TEST(LineAssembler, AWritersCloseEndsTheLineItLeftUnfinished)
{
    for (const bool take_between : {true, false}) {
        const auto [unfinished, lines] = writers({"echo a", "echo b\n"}, take_between);
        EXPECT_EQ(unfinished, (std::vector<bool>{true, false}));
        EXPECT_EQ(lines, (Texts{"echo a", "echo b"}));
    }
}

TEST(LineAssembler, AWritersCloseEndsACommandContinuedWithABackslash)
{
    for (const bool take_between : {true, false}) {
        const auto [unfinished, lines] =
            writers({"echo a \\\n", "echo b\r\n", "x \\\r\n", "# c \\\n"}, take_between);
        EXPECT_EQ(unfinished, (std::vector<bool>{true, false, true, false}));
        EXPECT_EQ(lines, (Texts{"echo a ", "echo b", "x "}));
    }
}

TEST(LineAssembler, AWritersCloseAfterCompleteLinesChangesNothing)
{
    const auto [unfinished, lines] = writers({"a\n\\\\\n", "", "# c", "   ", "b\n"}, false);
    EXPECT_EQ(unfinished, (std::vector<bool>{false, false, false, false, false}));
    EXPECT_EQ(lines, (Texts{"a", "\\\\", "b"}));
}

TEST(LineAssembler, BytesPassThroughUnchanged)
{
    const std::string invalid_utf8 = "echo \xff\xfe \xc3\x28 caf\xc3\xa9";
    EXPECT_EQ(texts(assemble(invalid_utf8 + "\n")), (Texts{invalid_utf8}));
}

TEST(LineAssembler, FlagsNulBytes)
{
    const auto lines = assemble(std::string("ok\nbad\0line\nok2\n", 16));
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].fault, LineFault::none);
    EXPECT_EQ(lines[1].fault, LineFault::nul_byte);
    EXPECT_EQ(lines[1].first_line, 2u);
    EXPECT_EQ(lines[1].text, "") << "a command that cannot run is not kept";
    EXPECT_EQ(lines[2].fault, LineFault::none);
    EXPECT_EQ(lines[2].first_line, 3u);
}

// Each command as "LINE:text" or "LINE:FAULT", to compare whole results.
std::vector<std::string> described(const std::vector<LogicalLine>& lines)
{
    std::vector<std::string> result;
    for (const auto& line : lines) {
        const char* fault = line.fault == LineFault::nul_byte   ? "NUL"
                            : line.fault == LineFault::too_long ? "TOO LONG"
                                                                : nullptr;
        result.push_back(std::to_string(line.first_line) + ":" + (fault ? fault : line.text));
    }
    return result;
}

TEST(LineAssembler, ReportsANulByteBeforeTheLineEnds)
{
    LineAssembler assembler;
    assembler.feed("ok\nbad\0 and no newline yet"s);
    EXPECT_EQ(assembler.next()->text, "ok");
    const auto bad = assembler.next();
    ASSERT_TRUE(bad.has_value()) << "known to be unrunnable before its newline";
    EXPECT_EQ(bad->fault, LineFault::nul_byte);
    EXPECT_EQ(bad->first_line, 2u);
    assembler.feed("still the same line");
    EXPECT_FALSE(assembler.next().has_value()) << "reported once";
    assembler.feed(" until here\nnext\n");
    const auto next = assembler.next();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->text, "next");
    EXPECT_EQ(next->first_line, 3u);
}

TEST(LineAssembler, RefusesACommandOverTheLimitAndDropsItAsItComes)
{
    LineAssembler assembler(1024);
    const std::string chunk(4096, 'x');
    std::size_t reports = 0;
    for (int i = 0; i < 2560; ++i) { // 10 MiB without a newline
        assembler.feed(chunk);
        while (auto line = assembler.next()) {
            EXPECT_EQ(line->fault, LineFault::too_long);
            EXPECT_EQ(line->first_line, 1u);
            ++reports;
        }
        EXPECT_LE(assembler.held_bytes(), 1024u + 2 + chunk.size());
    }
    EXPECT_EQ(reports, 1u);
    assembler.feed("\nok\n");
    EXPECT_EQ(assembler.next()->text, "ok");
    assembler.end_of_input();
    EXPECT_FALSE(assembler.next().has_value());
    EXPECT_TRUE(assembler.exhausted());
}

TEST(LineAssembler, ACommandAtTheLimitRuns)
{
    const std::string longest(16, 'x');
    EXPECT_EQ(described(assemble(longest + "\n" + longest + "x\n", 3, 16)),
              (Texts{"1:" + longest, "2:TOO LONG"}));
    EXPECT_EQ(described(assemble("12345678\\\n12345678\n", 3, 16)), (Texts{"1:1234567812345678"}));
    EXPECT_EQ(described(assemble("12345678\\\n123456789\nok\n", 3, 16)),
              (Texts{"1:TOO LONG", "3:ok"}));
}

TEST(LineAssembler, DropsTheContinuationLinesOfABadCommand)
{
    EXPECT_EQ(described(assemble("a\0 \\\nstill it \\\r\nand it\nok\n"s)),
              (Texts{"1:NUL", "4:ok"}));
    const std::string long_line(40, 'x');
    for (std::size_t chunk = 1; chunk <= 8; ++chunk) {
        EXPECT_EQ(described(assemble(long_line + " \\\r\n" + long_line + "\nok\n", chunk, 16)),
                  (Texts{"1:TOO LONG", "3:ok"}))
            << "chunk size " << chunk;
        EXPECT_EQ(described(assemble(long_line + "\\\\\nok\n", chunk, 16)),
                  (Texts{"1:TOO LONG", "2:ok"}))
            << "an even number of backslashes does not continue; chunk size " << chunk;
    }
}

TEST(LineAssembler, SkipsLongCommentsAndBlankLinesQuietly)
{
    const std::string blanks(40, ' ');
    for (std::size_t chunk = 1; chunk <= 8; ++chunk) {
        EXPECT_EQ(described(assemble("# " + std::string(40, 'c') + " \\\n" + blanks + "\n" +
                                         blanks + "# " + "c\0"s + "\nok\n",
                                     chunk, 16)),
                  (Texts{"4:ok"}))
            << "chunk size " << chunk;
        EXPECT_EQ(described(assemble(blanks + "x\nok\n", chunk, 16)), (Texts{"1:TOO LONG", "2:ok"}))
            << "chunk size " << chunk;
    }
}

TEST(LineAssembler, InputEndingInsideADroppedLine)
{
    EXPECT_EQ(described(assemble("ok\nx\0y"s)), (Texts{"1:ok", "2:NUL"}));
    EXPECT_EQ(described(assemble(std::string(40, 'x'), 4, 16)), (Texts{"1:TOO LONG"}));
    EXPECT_EQ(described(assemble(std::string(40, 'x') + "\\", 4, 16)), (Texts{"1:TOO LONG"}));
}

TEST(LineAssembler, FaultsDoNotDependOnChunkBoundaries)
{
    const std::string input = "ok\nb\0ad \\\ncont\n# c\0\n"s + std::string(30, 'y') + "\n   \t" +
                              std::string(30, ' ') + "\n \\\n" + std::string(20, 'z') + "\nlast";
    const auto whole = described(assemble(input, 0, 16));
    EXPECT_EQ(whole, (Texts{"1:ok", "2:NUL", "5:TOO LONG", "7:TOO LONG", "9:last"}));
    for (std::size_t chunk = 1; chunk <= input.size(); ++chunk) {
        EXPECT_EQ(described(assemble(input, chunk, 16)), whole) << "chunk size " << chunk;
    }
}

TEST(LineAssembler, ChunkBoundariesDoNotMatter)
{
    const std::string input = "a \\\nb\r\n# c\n\nd\ne";
    const auto whole = texts(assemble(input));
    for (std::size_t chunk = 1; chunk <= input.size(); ++chunk) {
        EXPECT_EQ(texts(assemble(input, chunk)), whole) << "chunk size " << chunk;
    }
}

TEST(LineAssembler, OneMebibyteLine)
{
    const std::string long_line(1 << 20, 'x');
    const auto lines = assemble(long_line + "\nshort\n", 4096);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].text, long_line);
    EXPECT_EQ(lines[1].text, "short");
}

TEST(LineAssembler, HandsOutLinesOneAtATime)
{
    LineAssembler assembler;
    assembler.feed("a\nb\nc");
    EXPECT_EQ(assembler.next()->text, "a");
    EXPECT_EQ(assembler.next()->text, "b");
    EXPECT_FALSE(assembler.next().has_value()) << "c is not complete before end of input";
    EXPECT_FALSE(assembler.exhausted());
    assembler.feed("d\n");
    EXPECT_EQ(assembler.next()->text, "cd");
    assembler.end_of_input();
    EXPECT_FALSE(assembler.next().has_value());
    EXPECT_TRUE(assembler.exhausted());
}

} // namespace
} // namespace gpusched
