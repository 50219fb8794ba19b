#pragma once

#include <gpusched/lease_record.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::sys {

// A host-wide lease is an abstract Unix socket name (lease_socket_name) bound by a listening
// SOCK_STREAM socket. The kernel lets one socket at a time bind a name, whoever asks, and
// frees the name when the socket's last descriptor closes, however its holders end. Every
// descriptor of the socket (dup'd, inherited by a job and its children) holds the lease.
// There is no file: nothing to remove, replace, plant or clean up.

// Binds a new listening socket (close-on-exec) to `name`; nothing when another socket holds it.
std::optional<UniqueFd> bind_lease(const std::string& name);

// Connects to the socket holding `name`, without blocking. The holder never accepts: the
// connection waits in its queue until the holder's socket goes, and then hangs up (POLLHUP),
// which is how a waiter learns, without polling, that the lease is free. Nothing when nobody
// listens on the name (it was just let go, or its holder has bound it and not yet listened)
// or when the holder's queue is full (net.core.somaxconn connections).
std::optional<UniqueFd> connect_to_lease(const std::string& name);

// True when a socket holds `name` and listens: a connection to it is made (and dropped at
// once) or its queue is full. A socket bound a moment ago that does not listen yet counts as
// free: its holder has yet to look for what excludes it, and finds our names then.
bool lease_is_bound(const std::string& name);

// Who called listen() on the socket at the other end of `connection` (SO_PEERCRED).
std::optional<LeaseTaker> taker_of(int connection);

// Who holds `name`, asked through a connection of our own. Such a connection stays in the
// holder's queue until the lease ends, so it is not made when that queue is half full; nothing
// then, or when the name is free.
std::optional<LeaseTaker> ask_lease_taker(const std::string& name);

// True when `fd` is a listening stream socket bound to `name`: since a name has one socket,
// it is the lease itself (one we inherited).
bool holds_lease(int fd, const std::string& name);

// The abstract name a listening stream socket is bound to; nothing for any other descriptor.
std::optional<std::string> listening_name(int fd);

// The names starting with `prefix` that sockets of this network namespace have bound, each
// once (from /proc/net/unix); nothing when that table cannot be read (no descriptor free,
// say, errno EMFILE): who holds a name is then unknown, which is not the same as no one.
std::optional<std::vector<std::string>> bound_lease_names(std::string_view prefix);

} // namespace gpusched::sys
