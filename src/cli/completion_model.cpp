#include "completion_model.hpp"

#include "complete_jobs_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gpusched::cli::completion {
namespace {

// The values offered for the options that take a few known ones. Each is tested to be
// accepted by the option it is offered for (tests/integration/completion_test.cpp), so the
// list cannot drift from what the parser takes. --halt's counts are starting points to edit.
const std::vector<std::pair<std::string, std::vector<std::string>>> k_option_words = {
    {"halt",
     {"never", "now,fail=1", "soon,fail=1", "now,fail=10%", "soon,fail=10%", "now,success=1",
      "soon,success=1", "now,done=1", "soon,done=1"}},
    {"sampling-mode", {"grid", "shuffled_grid", "random"}},
};
// Options that take GPU ids, in every command that has them.
constexpr std::string_view k_gpu_ids_option = "gpus";

// A description as the shells show it: its first sentence, on one line. Each script quotes
// it as its shell needs (quoted_for_sh, quoted_for_fish, zsh_explanation).
std::string plain(std::string_view text)
{
    std::string plain(text.substr(0, text.find(". ")));
    std::replace(plain.begin(), plain.end(), '\n', ' ');
    return plain;
}

OptionEntry entry_of(const CLI::Option& option)
{
    OptionEntry entry{option.get_snames(),
                      option.get_lnames(),
                      plain(option.get_description()),
                      ValueKind::none,
                      {}};
    if (option.get_expected_max() <= 0) {
        return entry;
    }
    entry.value = ValueKind::any;
    for (const auto& name : entry.longs) {
        if (name == k_gpu_ids_option) {
            entry.value = ValueKind::gpu_ids;
        }
        if (std::find(k_options_of_jobs.begin(), k_options_of_jobs.end(), name) !=
            k_options_of_jobs.end()) {
            entry.value = ValueKind::jobs;
        }
        for (const auto& [option_name, words] : k_option_words) {
            if (name == option_name) {
                entry.value = ValueKind::words;
                entry.words = words;
            }
        }
    }
    return entry;
}

} // namespace

std::string escaped(std::string_view text, std::string_view special)
{
    std::string escaped;
    for (const char c : text) {
        if (special.find(c) != std::string_view::npos) {
            escaped += '\\';
        }
        escaped += c;
    }
    return escaped;
}

std::string quoted_for_sh(std::string_view text)
{
    std::string quoted;
    for (const char c : text) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted;
}

std::string quoted_for_fish(std::string_view text)
{
    return escaped(text, "\\'");
}

std::string zsh_explanation(std::string_view text)
{
    return quoted_for_sh(escaped(text, "\\[]"));
}

std::vector<CommandEntry> commands_of(const CLI::App& app)
{
    std::vector<CommandEntry> commands;
    const auto add = [&](const CLI::App& command, std::string name) {
        CommandEntry entry{std::move(name), plain(command.get_description()), {}};
        entry.takes_jobs = std::find(k_commands_of_jobs.begin(), k_commands_of_jobs.end(),
                                     entry.name) != k_commands_of_jobs.end();
        for (const auto* option : command.get_options()) {
            if (option->nonpositional()) {
                entry.options.push_back(entry_of(*option));
            }
        }
        commands.push_back(std::move(entry));
    };
    add(app, "");
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (!sub->get_group().empty()) { // internal subcommands have no group
            add(*sub, sub->get_name());
        }
    }
    return commands;
}

const CommandEntry& command_named(const std::vector<CommandEntry>& commands, std::string_view name)
{
    for (const auto& command : commands) {
        if (command.name == name) {
            return command;
        }
    }
    throw std::logic_error(fmt::format("no command {} to complete", name));
}

std::string joined(const std::vector<std::string>& words)
{
    return fmt::format("{}", fmt::join(words, " "));
}

std::string names_of(const OptionEntry& option, std::string_view separator)
{
    std::string names;
    for (const auto& name : option.shorts) {
        names += fmt::format("{}-{}", names.empty() ? "" : separator, name);
    }
    for (const auto& name : option.longs) {
        names += fmt::format("{}--{}", names.empty() ? "" : separator, name);
    }
    return names;
}

} // namespace gpusched::cli::completion
