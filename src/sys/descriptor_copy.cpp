#include <gpusched/sys/descriptor_copy.hpp>

#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/resource.h>

#include <cerrno>
#include <optional>
#include <stdexcept>
#include <string>

namespace gpusched::sys {
namespace {

// Where the limit on open files leaves no place at `lowest` or above (fcntl's EINVAL), that
// limit and what to raise it to.
std::optional<std::string> limit_below(int lowest)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur > static_cast<rlim_t>(lowest)) {
        return std::nullopt;
    }
    return fmt::format("the limit on open files (ulimit -n) is {}, and a run on this many GPUs "
                       "needs descriptors up to {}: raise it to {} or more",
                       limit.rlim_cur, lowest, lowest + 1);
}

} // namespace

Failure descriptor_copy_failure(int lowest)
{
    const int error = errno;
    if (auto limit = error == EINVAL ? limit_below(lowest) : std::nullopt) {
        return Failure{std::move(*limit), error};
    }
    errno = error;
    return system_failure("fcntl F_DUPFD_CLOEXEC");
}

UniqueFd duplicate_above(int fd, int lowest)
{
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, lowest));
    if (!copy) {
        if (auto limit = errno == EINVAL ? limit_below(lowest) : std::nullopt) {
            throw std::runtime_error(*limit);
        }
        throw_errno("fcntl F_DUPFD_CLOEXEC");
    }
    return copy;
}

} // namespace gpusched::sys
