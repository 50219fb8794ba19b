#include <gpusched/sys/accepted_connections.hpp>

#include <gpusched/parse_number.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace gpusched::sys {
namespace {

struct CloseDirectory {
    void operator()(DIR* directory) const { closedir(directory); }
};

// The inode of the socket `fd` holds ("socket:[12345]"); nothing for what is no socket.
std::optional<unsigned long> socket_inode(int fd)
{
    std::array<char, 64> target{};
    const auto path = "/proc/self/fd/" + std::to_string(fd);
    const auto length = readlink(path.c_str(), target.data(), target.size() - 1);
    const std::string_view link(target.data(), length > 0 ? static_cast<std::size_t>(length) : 0);
    if (!link.starts_with("socket:[") || !link.ends_with("]")) {
        return std::nullopt;
    }
    return parse_number<unsigned long>(link.substr(8, link.size() - 9));
}

// The port of a TCP address (IPv4 or IPv6); nothing for another family.
std::optional<int> port_of(const sockaddr_storage& address)
{
    if (address.ss_family == AF_INET) {
        return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
    }
    if (address.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
    }
    return std::nullopt;
}

} // namespace

std::vector<AcceptedConnection> accepted_connections(int port)
{
    std::vector<AcceptedConnection> connections;
    const std::unique_ptr<DIR, CloseDirectory> directory(opendir("/proc/self/fd"));
    if (!directory) {
        return connections;
    }
    while (const auto* entry = readdir(directory.get())) {
        const auto fd = parse_number<int>(entry->d_name);
        const auto inode = fd ? socket_inode(*fd) : std::nullopt;
        if (!inode) {
            continue;
        }
        sockaddr_storage local{};
        sockaddr_storage peer{};
        socklen_t local_size = sizeof(local);
        socklen_t peer_size = sizeof(peer);
        // A listening socket has no peer.
        if (getsockname(*fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0 ||
            getpeername(*fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0 ||
            port_of(local) != port) {
            continue;
        }
        connections.push_back({*fd, *inode, port_of(peer).value_or(0)});
    }
    return connections;
}

void shut_down(const AcceptedConnection& connection)
{
    if (socket_inode(connection.fd) == connection.inode) {
        shutdown(connection.fd, SHUT_RDWR);
    }
}

} // namespace gpusched::sys
