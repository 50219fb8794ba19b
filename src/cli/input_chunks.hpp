#pragma once

#include <gpusched/sys/input_reader.hpp>

#include <cstddef>
#include <vector>

namespace gpusched::cli {

// The next commands of the input: up to `count`, or fewer when that is all the input holds
// for now; waits for the input when it has none yet; empty once the input has ended.
std::vector<sys::InputLine> read_chunk(sys::InputReader& input, std::size_t count);

} // namespace gpusched::cli
