#pragma once

#include <string_view>

namespace gpusched::sys {

// Writes all of `bytes` to `fd`, resuming after short writes and EINTR; false on an error
// (errno tells which).
bool write_all(int fd, std::string_view bytes);

} // namespace gpusched::sys
