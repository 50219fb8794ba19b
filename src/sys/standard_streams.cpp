#include <gpusched/sys/standard_streams.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <initializer_list>

namespace gpusched::sys {
namespace {

bool g_stdin_was_closed = false;

} // namespace

void prepare_standard_streams()
{
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
        if (fcntl(fd, F_GETFD) >= 0) {
            continue;
        }
        // open returns the lowest free descriptor: fd itself, as the lower ones are open.
        const int opened = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (opened != fd && opened >= 0) {
            dup2(opened, fd);
            close(opened);
        }
        if (fd == STDIN_FILENO) {
            g_stdin_was_closed = true;
        }
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, nullptr);
}

bool stdin_was_closed()
{
    return g_stdin_was_closed;
}

} // namespace gpusched::sys
