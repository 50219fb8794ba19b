#include "help_format.hpp"

#include "command_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <vector>

namespace gpusched::cli {
namespace {

constexpr std::size_t k_terminal_width = 80;
constexpr std::size_t k_name_column = 30;
// Where the summaries of the "Commands:" block begin: after the longest name (hypersearch).
constexpr std::size_t k_command_column = 17;

// Breaks `text` into lines of at most `width` characters at spaces; CLI11 indents each line
// after a newline to the description column.
std::string wrap(const std::string& text, std::size_t width)
{
    std::istringstream words(text);
    std::string wrapped;
    std::string line;
    std::string word;
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            wrapped += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return wrapped + line;
}

class WrappingFormatter final : public CLI::Formatter {
public:
    WrappingFormatter() { column_width(k_name_column); }

    std::string make_option_desc(const CLI::Option* option) const override
    {
        return wrap(CLI::Formatter::make_option_desc(option), k_terminal_width - k_name_column);
    }
    std::string make_description(const CLI::App* app) const override
    {
        return wrap(CLI::Formatter::make_description(app), k_terminal_width) + "\n";
    }
    // CLI11's order, but with the group of --help and --version last, after the groups that
    // say what gpusched does.
    std::string make_help(const CLI::App* app, std::string name,
                          CLI::AppFormatMode mode) const override
    {
        if (mode == CLI::AppFormatMode::Sub) {
            return make_expanded(app);
        }
        // The commands first, as git lists them, then the options of a run.
        std::ostringstream out;
        out << make_description(app) << make_usage(app, name) << make_commands(app, name)
            << make_positionals(app) << make_option_groups(app) << make_subcommands(app, mode)
            << '\n'
            << make_footer(app);
        return out.str();
    }

    // A subcommand comes first, so the main command's usage is two lines: a run, and a
    // subcommand with its own options.
    std::string make_usage(const CLI::App* app, std::string name) const override
    {
        if (public_subcommands(app).empty()) {
            return CLI::Formatter::make_usage(app, std::move(name));
        }
        return fmt::format(
            "Usage: {0} [OPTIONS] [FILE ...]\n       {0} COMMAND [OPTIONS] [ARGS ...]\n", name);
    }

    // Listed in the "Commands:" block instead.
    std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override
    {
        return public_subcommands(app).empty() ? CLI::Formatter::make_subcommands(app, mode) : "";
    }

    std::string make_subcommand(const CLI::App* sub) const override
    {
        std::ostringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true),
                                 wrap(sub->get_description(), k_terminal_width - k_name_column),
                                 column_width_);
        return out.str();
    }

private:
    static std::vector<const CLI::App*> public_subcommands(const CLI::App* app)
    {
        if (app->get_parent() != nullptr) {
            return {};
        }
        // Internal subcommands have no group.
        return app->get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
    }
    std::string make_commands(const CLI::App* app, const std::string& name) const;
    std::string make_option_groups(const CLI::App* app) const;
};

// The subcommands by group, a line each, in the order of command_list.hpp; one the list
// lacks (the manual's generator refuses it) comes last with its description.
std::string WrappingFormatter::make_commands(const CLI::App* app, const std::string& name) const
{
    const auto subcommands = public_subcommands(app);
    if (subcommands.empty()) {
        return "";
    }
    const auto has = [&](std::string_view command) {
        return std::any_of(subcommands.begin(), subcommands.end(),
                           [&](const CLI::App* sub) { return sub->get_name() == command; });
    };
    std::string text = "\nCommands:\n";
    std::string_view group;
    for (const auto& command : k_command_list) {
        if (!has(command.name)) {
            continue;
        }
        if (command.group != group) {
            group = command.group;
            text += fmt::format("  {}:\n", group);
        }
        text += fmt::format("    {:<{}}{}\n", command.name, k_command_column - 4, command.summary);
    }
    for (const auto* sub : subcommands) {
        if (command_summary(sub->get_name()) == nullptr) {
            text += fmt::format("    {:<{}}{}\n", sub->get_name(), k_command_column - 4,
                                sub->get_description());
        }
    }
    return text +
           wrap(fmt::format("{} help COMMAND: a command's options; man gpusched-COMMAND: "
                            "its manual.",
                            name),
                k_terminal_width) +
           "\n";
}

std::string WrappingFormatter::make_option_groups(const CLI::App* app) const
{
    std::string text;
    for (const auto& group : option_groups(*app)) {
        const auto options = app->get_options([&group](const CLI::Option* option) {
            return option->get_group() == group && option->nonpositional();
        });
        if (!group.empty() && !options.empty()) {
            text += make_group(group, false, options); // each starts with a blank line
        }
    }
    return text;
}

} // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter()
{
    return std::make_shared<WrappingFormatter>();
}

std::vector<std::string> option_groups(const CLI::App& command)
{
    // The groups in the order a run's options are read in.
    constexpr std::array k_order = {k_input_group,  k_gpus_group,  k_jobs_group, k_records_group,
                                    k_leases_group, k_queue_group, k_log_group};
    const auto* help = command.get_help_ptr();
    const auto rank = [&](const std::string& group) {
        if (help != nullptr && group == help->get_group()) {
            return k_order.size() + 1;
        }
        const auto found = std::find(k_order.begin(), k_order.end(), group);
        return found != k_order.end() ? static_cast<std::size_t>(found - k_order.begin())
                                      : k_order.size();
    };
    auto groups = command.get_groups();
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    return groups;
}

} // namespace gpusched::cli
