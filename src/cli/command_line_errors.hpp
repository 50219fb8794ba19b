#pragma once

#include <CLI/App.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::cli {

// The name gpusched was called by (argv[0]'s last part: gpusched, simple_gpu_scheduler,
// simple_hypersearch), which starts every message it prints about itself.
void set_program_name(std::string_view argv0);
const std::string& program_name();

// What CLI11 prints for a bad command line, as gpusched prints every error:
// "simple_gpu_scheduler: error: unknown option --gpu (did you mean --gpus?)", then where the
// help is. `args` is the command line as given (without argv[0]): it tells a command that was
// read as options from a mistyped option.
std::function<std::string(const CLI::App*, const CLI::Error&)>
failure_message(std::vector<std::string> args);

// Refuses a first argument that is neither a file nor a subcommand but looks like a mistyped
// subcommand (`gpusched staus`), which would otherwise be read as a command file that does
// not exist, after looking for GPUs.
void check_subcommand_name(const CLI::App& app, const std::vector<std::string>& args);

} // namespace gpusched::cli
