#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpusched::testing {

// A new directory of the test's own, `PREFIX-XXXXXX` under the system's temporary directory;
// thrown, failing the test, where none can be made. The test removes it.
inline std::filesystem::path make_temp_directory(std::string_view prefix)
{
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp " + pattern + " failed");
    }
    return pattern;
}

} // namespace gpusched::testing
