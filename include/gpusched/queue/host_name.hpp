#pragma once

#include <string>

namespace gpusched::queue {

// This machine's host name, as workers of either store record it (and name it in refusals).
std::string this_host();

} // namespace gpusched::queue
