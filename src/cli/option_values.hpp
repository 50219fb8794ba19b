#pragma once

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace gpusched::cli {

// Seconds as options take them, in the milliseconds the runtime counts in.
inline std::chrono::milliseconds to_milliseconds(double seconds)
{
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

// A variable of gpusched's own environment, when set.
inline std::optional<std::string> environment_variable(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

} // namespace gpusched::cli
