#pragma once

#include <sys/types.h>

#include <string>

namespace gpusched::sys {

// The name of account `uid`, or its number where it has none (a container's user).
std::string user_name(uid_t uid);

} // namespace gpusched::sys
