#include <gpusched/sys/system_error.hpp>

#include <cerrno>
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

} // namespace gpusched::sys
