#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>

namespace gpusched::cli {

// A manual page, gpusched(1) or a subcommand's gpusched-NAME(1): `template_text` (man/*.1.in)
// with each marker line replaced:
//   .\" @OPTIONS NAME@      every option of command NAME (`gpusched` for the main one), in the
//                           groups of its --help
//   .\" @ENVIRONMENT@       the variables options take their defaults from (@ENVIRONMENT
//                           NAME@: those of command NAME)
//   .\" @NAME NAME@         the NAME line of gpusched-NAME(1), from command_list.hpp
//   .\" @COMMANDS@          each subcommand's page with its summary, in command_list's groups
//   .\" @PAGES@             each subcommand's page, for SEE ALSO
// and @VERSION@ by the version, @DATE@ by `date`. The lists are read from the command line's
// own definitions, the ones --help prints, so the manual cannot drift from them; a
// subcommand missing from command_list.hpp, or a marker naming an unknown command, is an
// error. Text lines are wrapped at 80 bytes.
std::string render_manual(const CLI::App& app, std::string_view template_text,
                          std::string_view date = "");

} // namespace gpusched::cli
