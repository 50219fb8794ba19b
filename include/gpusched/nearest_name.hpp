#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// The name among `names` that `wrong` was most likely meant to be (`--gpu` for `--gpus`,
// `--job-log` for `--joblog`, `staus` for `status`): the closest by edit distance (a letter
// added, dropped, changed, or two swapped), if close enough that the suggestion helps more
// than it misleads; a name that `wrong` starts, when only one does. None when nothing is.
std::optional<std::string> nearest_name(std::string_view wrong,
                                        const std::vector<std::string>& names);

// The edit distance (optimal string alignment) between `a` and `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

} // namespace gpusched
