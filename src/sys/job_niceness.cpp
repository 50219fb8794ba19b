#include <gpusched/sys/job_niceness.hpp>

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string_view>

namespace gpusched::sys {
namespace {

std::optional<std::string> find_on_path(std::string_view program)
{
    const char* path = std::getenv("PATH");
    std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
    while (true) {
        const auto end = rest.find(':');
        const auto directory = rest.substr(0, end);
        // Only an absolute directory: "" and "." would mean the job's own directory.
        if (directory.starts_with('/')) {
            auto candidate = fmt::format("{}/{}", directory, program);
            if (::access(candidate.c_str(), X_OK) == 0) {
                return candidate;
            }
        }
        if (end == std::string_view::npos) {
            return std::nullopt;
        }
        rest.remove_prefix(end + 1);
    }
}

// CAP_SYS_NICE (bit 23) among our effective capabilities.
bool may_raise_priority()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.starts_with("CapEff:")) {
            const auto bits = std::strtoull(line.c_str() + 7, nullptr, 16);
            return (bits >> 23) & 1U;
        }
    }
    return geteuid() == 0;
}

} // namespace

const std::optional<std::string>& nice_program()
{
    static const auto found = find_on_path("nice");
    return found;
}

Result<void> check_niceness(int increment)
{
    if (increment == 0) {
        return {};
    }
    if (!nice_program()) {
        return Failure{FailureKind::bad_request,
                       "nice(1) is not on gpusched's PATH (Debian's coreutils has it)", ENOENT};
    }
    if (increment > 0 || may_raise_priority()) {
        return {};
    }
    errno = 0;
    const int ours = getpriority(PRIO_PROCESS, 0);
    rlimit limit{};
    // RLIMIT_NICE allows a niceness down to 20 - its soft limit.
    if (errno == 0 && getrlimit(RLIMIT_NICE, &limit) == 0 &&
        (limit.rlim_cur == RLIM_INFINITY ||
         ours + increment >= 20 - static_cast<std::int64_t>(limit.rlim_cur))) {
        return {};
    }
    return Failure{FailureKind::refused,
                   fmt::format("a niceness below gpusched's own ({}) needs root, CAP_SYS_NICE or "
                               "a higher RLIMIT_NICE (ulimit -e)",
                               ours)};
}

} // namespace gpusched::sys
