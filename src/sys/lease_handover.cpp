#include <gpusched/sys/lease_handover.hpp>

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace gpusched::sys {
namespace {

// A lease is at most two sockets (a MIG instance's own and its share of its GPU).
constexpr std::size_t k_most_sockets = 2;

// One message of a hand-over, sent or received: a byte ('L'), with room beside it for a
// lease's sockets. Its header points into itself, so it is never copied.
struct LeaseMessage {
    LeaseMessage()
    {
        header.msg_iov = &data;
        header.msg_iovlen = 1;
        header.msg_control = control.data();
        header.msg_controllen = control.size();
    }
    LeaseMessage(const LeaseMessage&) = delete;
    LeaseMessage& operator=(const LeaseMessage&) = delete;

    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * k_most_sockets)> control{};
    msghdr header{};
};

} // namespace

bool send_lease(int connection, const std::vector<int>& sockets)
{
    if (sockets.empty() || sockets.size() > k_most_sockets) {
        return false;
    }
    LeaseMessage lease;
    lease.byte = 'L';
    msghdr& message = lease.header;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * sockets.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * sockets.size());
    std::memcpy(CMSG_DATA(header), sockets.data(), sizeof(int) * sockets.size());
    ssize_t sent = -1;
    do {
        sent = sendmsg(connection, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    return sent == 1;
}

std::vector<UniqueFd> receive_lease(int connection)
{
    LeaseMessage lease;
    msghdr& message = lease.header;
    ssize_t got = -1;
    do {
        got = recvmsg(connection, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    std::vector<UniqueFd> sockets;
    if (got <= 0) {
        return sockets;
    }
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        const auto count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
            sockets.emplace_back(fd);
        }
    }
    if (lease.byte != 'L' || (message.msg_flags & MSG_CTRUNC) != 0) {
        sockets.clear(); // not a hand-over: closed again
    }
    return sockets;
}

} // namespace gpusched::sys
