#include "command_line_errors.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/gpu_list.hpp>
#include <gpusched/nearest_name.hpp>

#include <CLI/Error.hpp>
#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>

namespace gpusched::cli {
namespace {

std::string& stored_program_name()
{
    static std::string name = "gpusched";
    return name;
}

// The subcommand the error is about: the last one named on the command line, or the app.
const CLI::App& command_of(const CLI::App& app)
{
    const CLI::App* command = &app;
    for (auto chosen = command->get_subcommands(); !chosen.empty();
         chosen = command->get_subcommands()) {
        command = chosen.back();
    }
    return *command;
}

// "gpusched exec", "simple_hypersearch", "gpusched hypersearch": the app is named as called.
std::string command_name(const CLI::App& app, const CLI::App& command)
{
    return &command == &app ? app.get_name() : app.get_name() + " " + command.get_name();
}

std::vector<std::string> option_names(const CLI::App& command)
{
    std::vector<std::string> names;
    for (const auto* option : command.get_options()) {
        for (const auto& name : option->get_lnames()) {
            names.push_back("--" + name);
        }
        for (const auto& name : option->get_snames()) {
            names.push_back("-" + name);
        }
    }
    return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app)
{
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App* sub) {
             return !sub->get_group().empty(); // internal subcommands have no group
         })) {
        names.push_back(sub->get_name());
    }
    return names;
}

bool is_option_like(std::string_view arg)
{
    return arg.size() > 1 && arg.front() == '-' && arg != "--";
}

bool exists(const std::string& path)
{
    struct stat status {};
    return stat(path.c_str(), &status) == 0;
}

// In `gpusched --gpus 0 python3 -c 'print(1)'`, a word before the unknown option that is
// neither a file, a GPU id nor an option's value: a command, meant for `gpusched exec`.
bool command_before(const CLI::App& command, const std::vector<std::string>& args,
                    std::string_view unknown)
{
    bool value_next = false;
    for (const auto& arg : args) {
        if (arg == unknown || arg == "--") {
            return false;
        }
        if (is_option_like(arg)) {
            const auto* option = command.get_option_no_throw(arg.substr(0, arg.find('=')));
            value_next = option != nullptr && option->get_items_expected_max() > 0 &&
                         arg.find('=') == std::string::npos;
            continue;
        }
        if (value_next || looks_like_gpu_ids(arg)) {
            value_next = false;
            continue;
        }
        if (!exists(arg)) {
            return true;
        }
    }
    return false;
}

std::string about_extras(const CLI::App& app, const CLI::App& command,
                         const std::vector<std::string>& extras,
                         const std::vector<std::string>& args)
{
    const auto unknown = std::find_if(extras.begin(), extras.end(),
                                      [](const auto& arg) { return is_option_like(arg); });
    if (unknown == extras.end()) {
        return fmt::format("{} takes no argument '{}'", command_name(app, command), extras.front());
    }
    const auto name = unknown->substr(0, unknown->find('='));
    auto message = fmt::format("unknown option {}", name);
    if (&command != &app) {
        message += fmt::format(" for {}", command.get_name());
    }
    if (const auto nearest = nearest_name(name, option_names(command))) {
        return message + fmt::format(" (did you mean {}?)", *nearest);
    }
    if (command.get_name() == "exec") {
        return message + fmt::format(": if it belongs to the command, put -- before the "
                                     "command: {} [OPTIONS] -- COMMAND ARGS...",
                                     command_name(app, command));
    }
    if (&command == &app && command_before(command, args, *unknown)) {
        return message + fmt::format(": gpusched runs the commands of FILEs (or stdin); to run "
                                     "one command on a free GPU, put `exec` first and -- before "
                                     "the command: {} exec [OPTIONS] -- COMMAND ARGS...",
                                     program_name());
    }
    return message;
}

// CLI11's "--timeout: must be more than 0 s" reads better without the colon.
std::string without_colon_before_must(std::string message)
{
    if (const auto at = message.find(": must ");
        at != std::string::npos && message.find(' ') > at) {
        message.erase(at, 1);
    }
    return message;
}

} // namespace

void set_program_name(std::string_view argv0)
{
    const auto slash = argv0.rfind('/');
    const auto name = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
    stored_program_name() = name.empty() ? "gpusched" : std::string(name);
}

const std::string& program_name()
{
    return stored_program_name();
}

std::function<std::string(const CLI::App*, const CLI::Error&)>
failure_message(std::vector<std::string> args)
{
    return [args = std::move(args)](const CLI::App* app, const CLI::Error& error) {
        const auto& command = command_of(*app);
        std::string message = error.what();
        if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
            auto extras = command.remaining();
            if (extras.empty()) {
                extras = app->remaining(true);
            }
            if (!extras.empty()) {
                message = about_extras(*app, command, extras, args);
            }
        } else if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
            message = without_colon_before_must(std::move(message));
        }
        return fmt::format("{}: error: {}\nRun '{} --help' for more information.\n", program_name(),
                           message, command_name(*app, command));
    };
}

void check_subcommand_name(const CLI::App& app, const std::vector<std::string>& args)
{
    if (args.empty() || is_option_like(args.front()) ||
        !app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == args.front(); })
             .empty() ||
        exists(args.front())) {
        return;
    }
    if (const auto nearest = nearest_name(args.front(), subcommand_names(app))) {
        throw UsageError(fmt::format("'{}' is neither a command file nor a subcommand (did you "
                                     "mean {} {}?)",
                                     args.front(), program_name(), *nearest));
    }
}

} // namespace gpusched::cli
