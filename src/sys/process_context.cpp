#include <gpusched/sys/process_context.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace gpusched::sys {
namespace {

bool same_file(const struct stat& a, const struct stat& b)
{
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string working_directory()
{
    std::error_code error;
    const auto real = std::filesystem::current_path(error);
    if (error) {
        throw std::runtime_error("cannot tell the current directory (was it removed?): " +
                                 error.message());
    }
    const char* shell_pwd = std::getenv("PWD");
    struct stat named {};
    struct stat here {};
    if (shell_pwd != nullptr && shell_pwd[0] == '/' && stat(shell_pwd, &named) == 0 &&
        stat(".", &here) == 0 && same_file(named, here)) {
        return shell_pwd;
    }
    return real.string();
}

} // namespace

JobContext this_process_context()
{
    JobContext context;
    context.directory = working_directory();
    for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable) {
        context.environment.emplace_back(*variable);
    }
    // Read by setting it: there is no other way, and it is set back at once.
    const mode_t mask = ::umask(022);
    ::umask(mask);
    context.umask = static_cast<unsigned>(mask);
    return context;
}

} // namespace gpusched::sys
