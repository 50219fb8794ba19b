#include <gpusched/sys/lease_handover.hpp>

#include <fmt/format.h>

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>

namespace gpusched::sys {
namespace {

constexpr std::string_view k_tag = "gpusched-waiter";
// A lease is at most two sockets (a MIG instance's own and its share of its GPU).
constexpr std::size_t k_most_sockets = 2;

} // namespace

std::string format_waiter_line(const WaiterLine& line)
{
    return fmt::format("{} 1 {} {:.3f} {:.3f} {:g} {}\n", k_tag, line.lease, line.since, line.used,
                       line.weight, line.gpus);
}

std::optional<WaiterLine> parse_waiter_line(std::string_view text)
{
    std::istringstream fields{std::string(text)};
    std::string tag;
    int version = 0;
    WaiterLine line;
    if (!(fields >> tag >> version >> line.lease >> line.since >> line.used >> line.weight >>
          line.gpus) ||
        tag != k_tag || version != 1 || !std::isfinite(line.since) || !std::isfinite(line.used) ||
        !std::isfinite(line.weight) || line.weight <= 0 || line.used < 0 || line.gpus == 0) {
        return std::nullopt;
    }
    return line;
}

bool owed_the_gpu(const WaiterLine& waiter, double holder_used, double holder_weight)
{
    return waiter.used / waiter.weight <= holder_used / holder_weight;
}

bool send_lease(int connection, const std::vector<int>& sockets)
{
    if (sockets.empty() || sockets.size() > k_most_sockets) {
        return false;
    }
    char byte = 'L';
    iovec data{&byte, 1};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * k_most_sockets)> control{};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
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
    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * k_most_sockets)> control{};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
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
    if (byte != 'L' || (message.msg_flags & MSG_CTRUNC) != 0) {
        sockets.clear(); // not a hand-over: closed again
    }
    return sockets;
}

} // namespace gpusched::sys
