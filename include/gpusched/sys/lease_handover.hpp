#pragma once

#include <gpusched/lease_waiter_line.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <cstddef>
#include <vector>

namespace gpusched::sys {

// How a GPU's lease passes from a run to a process waiting for it, at a job boundary, with
// no moment where the GPU is free for a third process to take.
//
// A waiter connects to the holder's lease socket (see connect_to_lease) and writes a line
// that says what it waits for and how much GPU time it has had (again whenever that
// changes). The holder accepts such connections only when one of its jobs has ended on the
// GPU, reads the lines, and, when a waiter is owed the GPU (see owed_the_gpu), sends it the
// lease's sockets themselves (SCM_RIGHTS) and lets go of its own descriptors. Everything else
// is as before: a holder that ends, or lets a GPU go without handing it over, closes the
// connections, and the waiters take the lease or wait for its new holder.

// Sends a lease's sockets over a waiter's connection; false when the waiter is gone.
bool send_lease(int connection, const std::vector<int>& sockets);

// What a waiter's connection brought: the lease's sockets when its holder handed it over,
// else nothing (the holder let go or ended: the connection hung up).
std::vector<UniqueFd> receive_lease(int connection);

} // namespace gpusched::sys
