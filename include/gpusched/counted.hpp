#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpusched {

// A count and its noun as a person writes them: "1 job", "2 jobs", "0 jobs"; `plural` where
// adding an s is wrong ("1 process", "3 processes").
std::string counted(std::size_t count, std::string_view singular, std::string_view plural = {});

} // namespace gpusched
