#include "completion.hpp"

#include "completion_model.hpp"

#include <gpusched/errors.hpp>

#include <fmt/format.h>

namespace gpusched::cli {

std::string render_completion(const CLI::App& app, std::string_view shell, std::string_view program)
{
    if (program != "gpusched" && program != "simple_gpu_scheduler" &&
        program != "simple_hypersearch") {
        throw UsageError(fmt::format(
            "no completion for '{}': gpusched, simple_gpu_scheduler or simple_hypersearch",
            program));
    }
    const auto commands = completion::commands_of(app);
    if (shell == "bash") {
        return completion::bash_script(commands);
    }
    if (shell == "zsh") {
        return completion::zsh_script(commands);
    }
    if (shell == "fish") {
        return completion::fish_script(commands, program);
    }
    throw UsageError(fmt::format("no completion for shell '{}': bash, zsh or fish", shell));
}

} // namespace gpusched::cli
