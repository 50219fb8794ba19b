#pragma once

#include <sys/types.h>

namespace gpusched::sys {

// Open file description locks (F_OFD_SETLK) on a whole file, as a run holds its job log. Such
// a lock belongs to the open file description, not to a process: every descriptor that refers
// to it (dup'd, inherited by a job and its children) holds it, and the kernel releases it when
// the last one closes, however its holders end. Nothing is left to clean up. (GPU leases are
// sockets instead, see lease_socket.hpp: a lock on a file is void once the file is removed.)

// Takes the write lock of `fd` unless another open file description holds it.
bool try_lock_exclusive(int fd);

// True when another open file description holds a lock on `fd`'s file. Looks without taking
// anything, so `gpusched status` never gets in a scheduler's way.
bool locked_by_another(int fd);

// Starts a helper process that blocks until the lock of `fd` is free, takes it for `fd`'s
// open file description (so for us), and exits 0. Waiting in the kernel costs nothing and
// wakes the moment the holder lets go; the helper's exit reaches the event loop as SIGCHLD.
// The helper keeps no other descriptor, so it can never hold another lease open, and it dies
// with us (PR_SET_PDEATHSIG). It keeps our blocked signal mask: stop it with SIGKILL.
pid_t start_lock_waiter(int fd);

} // namespace gpusched::sys
