#pragma once

#include <vector>

namespace gpusched::sys {

// A TCP connection this process accepted: its descriptor, its socket's inode (which tells it
// from a later connection given the same descriptor), and the peer's port.
struct AcceptedConnection {
    int fd = -1;
    unsigned long inode = 0;
    int peer_port = 0;
};

// The connections this process holds that were accepted on local port `port`, read from
// /proc/self/fd; none when that cannot be read.
std::vector<AcceptedConnection> accepted_connections(int port);

// Ends `connection` both ways (the thread reading it sees its end at once), where its
// descriptor still holds the same socket; the descriptor stays open for its owner to close.
void shut_down(const AcceptedConnection& connection);

} // namespace gpusched::sys
