#pragma once

#include <string>
#include <vector>

namespace gpusched::cli {

// `gpusched hypersearch TEMPLATE -p NAME VALUE... [options]` (also run as
// `simple_hypersearch`): prints one command per line. `args` excludes the program and
// subcommand names; `program` is how usage messages name the command.
int run_hypersearch(const std::string& program, std::vector<std::string> args);

} // namespace gpusched::cli
