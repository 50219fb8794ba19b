#pragma once

#include <CLI/App.hpp>
#include <CLI/Formatter.hpp>

#include <memory>
#include <string>

namespace gpusched::cli {

// CLI11's help with each description wrapped to fit an 80-column terminal.
std::shared_ptr<CLI::Formatter> wrapping_formatter();

// A command-line error as gpusched prints every error: "gpusched: error: --timeout: ...", then
// where help is.
std::string failure_message(const CLI::App* app, const CLI::Error& error);

} // namespace gpusched::cli
