#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>

namespace gpusched::cli {

// The manual page gpusched(1): `template_text` (man/gpusched.1.in) with each line
// `.\" @OPTIONS NAME@` replaced by the options of command NAME (`gpusched` for the main one),
// `.\" @ENVIRONMENT@` by the variables options take their defaults from, and @VERSION@ by the
// version. Both lists are read from the command line's own definitions, the ones --help
// prints, so the manual cannot drift from them.
std::string render_manual(const CLI::App& app, std::string_view template_text);

} // namespace gpusched::cli
