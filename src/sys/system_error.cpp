#include <gpusched/sys/system_error.hpp>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace gpusched::sys {

void throw_errno(const std::string& what)
{
    throw_error_code(errno, what);
}

void throw_error_code(int error, const std::string& what)
{
    throw std::system_error(error, std::generic_category(), what);
}

Failure system_failure(const std::string& what)
{
    const int error = errno;
    return Failure{what + ": " + std::strerror(error), error};
}

} // namespace gpusched::sys
