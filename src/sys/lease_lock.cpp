#include <gpusched/sys/lease_lock.hpp>

#include <gpusched/sys/system_error.hpp>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace gpusched::sys {
namespace {

struct flock whole_file(short type)
{
    struct flock lock {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET; // l_start = l_len = 0: the whole file, however long
    return lock;
}

} // namespace

bool try_lock_exclusive(int fd)
{
    auto lock = whole_file(F_WRLCK);
    if (fcntl(fd, F_OFD_SETLK, &lock) == 0) {
        return true;
    }
    if (errno == EAGAIN || errno == EACCES) {
        return false;
    }
    throw_errno("fcntl F_OFD_SETLK");
}

bool locked_by_another(int fd)
{
    auto lock = whole_file(F_WRLCK);
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) {
        throw_errno("fcntl F_OFD_GETLK");
    }
    return lock.l_type != F_UNLCK;
}

pid_t start_lock_waiter(int fd)
{
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        throw_errno("fork");
    }
    if (pid > 0) {
        return pid;
    }
    // The child: only system calls from here on.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(ESRCH); // the parent died before the line above
    }
    if (fd > 0) {
        close_range(0, static_cast<unsigned>(fd) - 1, 0);
    }
    close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
    auto lock = whole_file(F_WRLCK);
    while (fcntl(fd, F_OFD_SETLKW, &lock) != 0) {
        if (errno != EINTR) {
            _exit(errno);
        }
    }
    _exit(0);
}

} // namespace gpusched::sys
