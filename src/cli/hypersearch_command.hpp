#pragma once

#include <gpusched/hypersearch.hpp>

#include <CLI/App.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::cli {

// `gpusched hypersearch TEMPLATE -p NAME VALUE... [options]` (also run as
// `simple_hypersearch`): prints one command per line. `args` excludes the program and
// subcommand names; `program` is how usage messages name the command.
int run_hypersearch(const std::string& program, std::vector<std::string> args);

inline constexpr const char* k_hypersearch_description =
    "Print one command per configuration of a grid or random search, to pipe into gpusched";

// What the options bind to; -p groups are taken out before CLI11 parses the rest.
struct HypersearchArgs {
    HypersearchRequest request;
    std::string mode = "shuffled_grid";
    std::optional<std::int64_t> samples;
    std::optional<std::uint64_t> seed;
};
// The options, also registered on the main command's `hypersearch` entry so that the
// manual and the completions list them.
void add_hypersearch_options(CLI::App& app, HypersearchArgs& args);

} // namespace gpusched::cli
