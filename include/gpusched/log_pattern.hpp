#pragma once

namespace gpusched {

// How each log line on stderr starts: the time to the millisecond, then the message.
inline constexpr const char* k_log_pattern = "[%T.%e] %v";
// The same, with the message coloured by level (where the sink colours at all).
inline constexpr const char* k_coloured_log_pattern = "[%T.%e] %^%v%$";

} // namespace gpusched
