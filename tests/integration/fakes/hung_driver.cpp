// A driver library whose loading never ends, as the calls of a wedged driver never return.
// A probe child loads it through LD_LIBRARY_PATH in place of libcuda.so.1 or
// libnvidia-ml.so.1; it first appends the pid of that process to $HUNG_DRIVER_PIDS, so that
// a test can find the probe and watch it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((constructor)) void hang()
{
    if (const char* path = std::getenv("HUNG_DRIVER_PIDS")) {
        char line[32];
        const int length = std::snprintf(line, sizeof line, "%d\n", static_cast<int>(getpid()));
        const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write(fd, line, static_cast<std::size_t>(length)) < 0) {
                // nothing to do: the test then finds no probe and says so
            }
            close(fd);
        }
    }
    while (true) {
        pause();
    }
}

} // namespace
