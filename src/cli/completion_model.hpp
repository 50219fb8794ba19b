#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>
#include <vector>

// The command line as the completion scripts see it (read from its definitions), and the
// quoting each shell needs; one file per shell writes its script from it
// (completion_bash.cpp, completion_zsh.cpp, completion_fish.cpp).
namespace gpusched::cli::completion {

// What an option's value completes to.
enum class ValueKind {
    none,    // a flag: it takes no value
    any,     // a file name, or whatever the user types
    words,   // one of a few words
    gpu_ids, // GPU ids, comma-separated, as `gpusched gpus` lists them
    jobs,    // job ids or labels, comma-separated, from the queue (gpusched __complete-jobs)
};

struct OptionEntry {
    std::vector<std::string> shorts;
    std::vector<std::string> longs;
    std::string description;
    ValueKind value = ValueKind::none;
    std::vector<std::string> words; // for ValueKind::words
};

struct CommandEntry {
    std::string name; // empty for the main command
    std::string description;
    std::vector<OptionEntry> options;
    bool takes_jobs = false; // its arguments are jobs (cancel ID...), not files
};

// The main command (named "") and every subcommand --help lists, with their options.
std::vector<CommandEntry> commands_of(const CLI::App& app);
const CommandEntry& command_named(const std::vector<CommandEntry>& commands, std::string_view name);

// `text` with every character escaped by a backslash where `special` holds it.
std::string escaped(std::string_view text, std::string_view special);
// For the inside of a single-quoted word of sh, bash and zsh: a quote ends the word, an
// escaped quote is written, and a new word is opened.
std::string quoted_for_sh(std::string_view text);
// For the inside of a single-quoted string of fish, where \' and \\ are the escapes.
std::string quoted_for_fish(std::string_view text);
// For the [explanation] of an _arguments spec, and the description of a _describe entry,
// inside single quotes: _arguments ends the explanation at an unescaped bracket, and reads a
// backslash as an escape.
std::string zsh_explanation(std::string_view text);

// The words, separated by spaces.
std::string joined(const std::vector<std::string>& words);
// "-g|--gpus", "--halt": an option's names as a shell case pattern, or as words.
std::string names_of(const OptionEntry& option, std::string_view separator);

// The scripts.
std::string bash_script(const std::vector<CommandEntry>& commands);
std::string zsh_script(const std::vector<CommandEntry>& commands);
// fish loads the completions of a command from a file of its name: one script per name.
std::string fish_script(const std::vector<CommandEntry>& commands, std::string_view program);

} // namespace gpusched::cli::completion
