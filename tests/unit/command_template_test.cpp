#include <gpusched/command_template.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

CommandTemplate parsed_template(std::string_view text)
{
    auto result = CommandTemplate::parse(text);
    if (!result) {
        ADD_FAILURE() << result.message();
    }
    return *result;
}

std::string render(const CommandTemplate& command, const std::vector<std::string_view>& values)
{
    std::string out;
    command.render(values, out);
    return out;
}

TEST(CommandTemplate, ReplacesPlaceholders)
{
    const auto command = parsed_template("python3 train.py --lr {lr} --bs {bs} --tag lr{lr}");
    EXPECT_EQ(command.names(), (std::vector<std::string>{"lr", "bs"}));
    EXPECT_EQ(render(command, {"0.1", "32"}), "python3 train.py --lr 0.1 --bs 32 --tag lr0.1");
}

TEST(CommandTemplate, DoubledBracesAreLiteral)
{
    const auto command = parsed_template("echo {{x}} {x} }}{{");
    EXPECT_EQ(command.names(), (std::vector<std::string>{"x"}));
    EXPECT_EQ(render(command, {"1"}), "echo {x} 1 }{");
}

TEST(CommandTemplate, NonIdentifierBracesAndShellParametersAreLiteral)
{
    const auto command =
        parsed_template("awk '{print $1}' f | run --n {n} ${HOME} ${n} {1x} { n } {} {n-1} {_a9}");
    EXPECT_EQ(command.names(), (std::vector<std::string>{"n", "_a9"}));
    EXPECT_EQ(render(command, {"5", "z"}),
              "awk '{print $1}' f | run --n 5 ${HOME} ${n} {1x} { n } {} {n-1} z");
}

TEST(CommandTemplate, UnclosedBraceIsLiteral)
{
    const auto command = parsed_template("echo {a} {b");
    EXPECT_EQ(render(command, {"1"}), "echo 1 {b");
}

TEST(CommandTemplate, NoPlaceholderIsAnError)
{
    EXPECT_FALSE(CommandTemplate::parse("echo {{a}}").ok());
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt)
{
    EXPECT_EQ(shell_quote("0.001"), "0.001");
    EXPECT_EQ(shell_quote("a/b-c_d:e,f=g+h@i%j"), "a/b-c_d:e,f=g+h@i%j");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("two words"), "'two words'");
    EXPECT_EQ(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
    EXPECT_EQ(shell_quote(""), "''");
}

} // namespace
} // namespace gpusched
