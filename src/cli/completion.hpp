#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>

namespace gpusched::cli {

// Tab completion for `shell` (bash, zsh or fish): the subcommands, and the options of each,
// read from the command line's own definitions, so it completes exactly what --help lists.
// Anything else completes as a file name.
std::string render_completion(const CLI::App& app, std::string_view shell);

} // namespace gpusched::cli
