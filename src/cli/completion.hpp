#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>

namespace gpusched::cli {

// Tab completion for `shell` (bash, zsh or fish): the subcommands, the options of each and
// the values of some (--halt, --sampling-mode, GPU ids from `gpusched gpus`), read from the
// command line's own definitions, so it completes exactly what --help lists. Anything else
// completes as a file name. The bash and zsh scripts serve all three names gpusched is
// installed under; fish reads one script per name, `program`'s.
std::string render_completion(const CLI::App& app, std::string_view shell,
                              std::string_view program = "gpusched");

} // namespace gpusched::cli
