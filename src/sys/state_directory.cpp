#include <gpusched/sys/state_directory.hpp>

#include <cstdlib>

namespace gpusched::sys {
namespace {

const char* absolute_from_environment(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr && value[0] == '/' ? value : nullptr;
}

} // namespace

std::optional<std::filesystem::path> state_directory()
{
    if (const char* state = absolute_from_environment("XDG_STATE_HOME")) {
        return std::filesystem::path(state) / "gpusched";
    }
    if (const char* home = absolute_from_environment("HOME")) {
        return std::filesystem::path(home) / ".local" / "state" / "gpusched";
    }
    return std::nullopt;
}

std::filesystem::path temporary_directory()
{
    const char* temporary = absolute_from_environment("TMPDIR");
    return temporary != nullptr ? temporary : "/tmp";
}

} // namespace gpusched::sys
