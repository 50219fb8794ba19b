#pragma once

#include <CLI/App.hpp>
#include <CLI/Formatter.hpp>

#include <memory>

namespace gpusched::cli {

// CLI11's help with each description wrapped to fit an 80-column terminal.
std::shared_ptr<CLI::Formatter> wrapping_formatter();

} // namespace gpusched::cli
