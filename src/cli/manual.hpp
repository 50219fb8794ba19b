#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>

namespace gpusched::cli {

// The manual page gpusched(1): `template_text` (man/gpusched.1.in) with each line
// `.\" @OPTIONS NAME@` replaced by the options of command NAME (`gpusched` for the main one)
// but the queue options, `.\" @QUEUE OPTIONS@` by those, listed once, `.\" @ENVIRONMENT@` by
// the variables options take their defaults from, @VERSION@ by the version and @DATE@ by
// `date`. The lists are read from the command line's own definitions, the ones --help
// prints, so the manual cannot drift from them. Text lines are wrapped at 80 bytes.
std::string render_manual(const CLI::App& app, std::string_view template_text,
                          std::string_view date = "");

} // namespace gpusched::cli
