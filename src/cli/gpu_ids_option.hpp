#pragma once

#include <CLI/App.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpusched::cli {

// -g/--gpus, taken the same way by every command that takes GPU ids (a run, worker, submit,
// exec, gpus, status): ids as a run takes them, from $GPUSCHED_GPUS when the option is absent.
CLI::Option* add_gpu_ids_option(CLI::App& app, std::vector<std::string>& gpus,
                                const std::string& description);

// Where the ids came from, to name in an error: "GPUSCHED_GPUS" when CLI11 took them from it
// (its whole value, as one token), else "--gpus".
std::string_view gpu_ids_source(const std::vector<std::string>& gpus);

} // namespace gpusched::cli
