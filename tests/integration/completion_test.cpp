// Shell completions are generated from the command line's definitions: bash completes real
// command lines, and every script offers every option --help lists.
#include "harness.hpp"

#include <gtest/gtest.h>

namespace gpusched::testing {
namespace {

const fs::path k_completions = GPUSCHED_COMPLETIONS_DIR;

// What bash offers for the words of `line` (the last one being completed).
std::string bash_completes(const std::vector<std::string>& words)
{
    TempDir dir;
    std::string array;
    for (const auto& word : words) {
        array += " '" + word + "'";
    }
    const auto script = "source " + (k_completions / "gpusched.bash").string() + "; COMP_WORDS=(" +
                        array + "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                        "; _gpusched; echo \"${COMPREPLY[*]}\"";
    const auto result = run(dir, {{"-c", script}, {}, {}, {}, "/bin/bash", {}});
    EXPECT_EQ(result.exit_status, 0) << result.err;
    return result.out;
}

TEST(Completion, BashCompletesCommandsAndTheirOptions)
{
    EXPECT_EQ(bash_completes({"gpusched", "wo"}), "worker\n");
    EXPECT_EQ(bash_completes({"gpusched", "exec", "--no"}), "--no-wait\n");
    EXPECT_EQ(bash_completes({"gpusched", "--gpus", "0", "--dry"}), "--dry-run\n");
    EXPECT_EQ(bash_completes({"gpusched", "submit", "--wa"}), "--wait\n");
}

TEST(Completion, EveryScriptOffersEveryOption)
{
    const auto zsh = read_file(k_completions / "_gpusched");
    const auto fish = read_file(k_completions / "gpusched.fish");
    const auto bash = read_file(k_completions / "gpusched.bash");
    ASSERT_FALSE(zsh.empty());
    ASSERT_FALSE(fish.empty());
    for (const std::string option : {"lock-dir", "no-wait", "key-file", "lease-timeout",
                                     "sampling-mode", "svg", "jobs-per-gpu", "failures"}) {
        EXPECT_NE(zsh.find("'--" + option + "["), std::string::npos) << option;
        EXPECT_NE(fish.find("-l " + option + " "), std::string::npos) << option;
        EXPECT_TRUE(bash.find("--" + option + " ") != std::string::npos ||
                    bash.find("--" + option + "\"") != std::string::npos)
            << option;
    }
    EXPECT_EQ(zsh.find("__probe"), std::string::npos) << "internal commands stay hidden";
}

} // namespace
} // namespace gpusched::testing
