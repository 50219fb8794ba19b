#pragma once

#include <string_view>
#include <vector>

namespace gpusched {

// The fields of `text` between `separator`s, empty ones included: "a,,b" is {"a", "", "b"}
// and "" is {""}. The views point into `text`.
std::vector<std::string_view> split(std::string_view text, char separator);

} // namespace gpusched
