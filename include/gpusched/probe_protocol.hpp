#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// The probe children answer with tab-separated lines, or with one line "error: WHY" when
// they could not look. These write and recognise that line.
std::string probe_error_line(std::string_view why);
std::optional<std::string> probe_error(std::string_view answer);

} // namespace gpusched
