#include <gpusched/sys/write_all.hpp>

#include <unistd.h>

#include <cerrno>

namespace gpusched::sys {

bool write_all(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        const auto written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
    return true;
}

} // namespace gpusched::sys
