#include <gpusched/sys/lease_socket.hpp>

#include <gpusched/lease_names.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/user_account.hpp>

#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gpusched::sys {
namespace {

struct Address {
    sockaddr_un address{};
    socklen_t length = 0;
};

// An abstract name: a NUL byte, then the name, its length given by the address length alone.
Address abstract_address(const std::string& name)
{
    if (name.size() > k_longest_socket_name) {
        throw std::logic_error("a lease name longer than an abstract socket name: " + name);
    }
    Address address;
    address.address.sun_family = AF_UNIX;
    std::memcpy(address.address.sun_path + 1, name.data(), name.size());
    address.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    return address;
}

UniqueFd stream_socket()
{
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
        throw_errno("socket AF_UNIX");
    }
    return fd;
}

int int_option(int fd, int option)
{
    int value = 0;
    socklen_t length = sizeof value;
    return getsockopt(fd, SOL_SOCKET, option, &value, &length) == 0 ? value : -1;
}

// What /proc/net/unix says about the sockets whose names start with `prefix`.
struct Bound {
    bool held = false;      // a socket of its own has the name (not only connections)
    std::size_t queued = 0; // connections waiting in the holder's queue
};

std::optional<std::map<std::string, Bound>> read_bound(std::string_view prefix)
{
    // Lines: "Num RefCount Protocol Flags Type St Inode Path", an abstract path written as '@'
    // and its bytes. A connection waiting to be accepted has the listener's name, no inode
    // and no socket of its own; a bound socket, listening or not, is unconnected (St 01).
    // Only stream sockets (Type 0001) count: a datagram socket may bind the same name.
    std::map<std::string, Bound> bound;
    std::ifstream table("/proc/net/unix");
    if (!table.is_open()) {
        return std::nullopt; // errno says why
    }
    std::string line;
    if (!std::getline(table, line)) { // the header
        return std::nullopt;
    }
    while (std::getline(table, line)) {
        std::istringstream fields(line);
        std::string num, refcount, protocol, flags, type, state, inode, path;
        if (!(fields >> num >> refcount >> protocol >> flags >> type >> state >> inode >> path) ||
            type != "0001" || path.size() < 2 || path[0] != '@' ||
            std::string_view(path).substr(1, prefix.size()) != prefix) {
            continue;
        }
        auto& entry = bound[path.substr(1)];
        if (inode == "0") {
            ++entry.queued;
        } else if (state == "01") {
            entry.held = true;
        }
    }
    return bound;
}

std::size_t queue_limit()
{
    std::ifstream file("/proc/sys/net/core/somaxconn");
    std::size_t limit = 128;
    file >> limit;
    return limit;
}

} // namespace

std::optional<UniqueFd> bind_lease(const std::string& name)
{
    auto fd = stream_socket();
    const auto address = abstract_address(name);
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) != 0) {
        if (errno == EADDRINUSE) {
            return std::nullopt;
        }
        throw_errno("bind @" + name);
    }
    // The largest queue the kernel allows (net.core.somaxconn): every waiter is one entry.
    if (listen(fd.get(), INT_MAX) != 0) {
        throw_errno("listen @" + name);
    }
    return fd;
}

std::optional<UniqueFd> connect_to_lease(const std::string& name)
{
    auto fd = stream_socket();
    const auto address = abstract_address(name);
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) ==
        0) {
        return fd;
    }
    if (errno == ECONNREFUSED || errno == EAGAIN) {
        return std::nullopt;
    }
    throw_errno("connect @" + name);
}

bool lease_is_bound(const std::string& name)
{
    auto fd = stream_socket();
    const auto address = abstract_address(name);
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) ==
        0) {
        return true;
    }
    if (errno == ECONNREFUSED) {
        return false;
    }
    if (errno == EAGAIN) {
        return true;
    }
    throw_errno("connect @" + name);
}

std::optional<LeaseTaker> taker_of(int connection)
{
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return std::nullopt;
    }
    return LeaseTaker{credentials.pid, credentials.uid, user_name(credentials.uid)};
}

std::optional<LeaseTaker> ask_lease_taker(const std::string& name)
{
    const auto bound = read_bound(name);
    if (!bound) {
        return std::nullopt;
    }
    const auto found = bound->find(name);
    if (found == bound->end() || !found->second.held ||
        found->second.queued >= queue_limit() / 2) {
        return std::nullopt;
    }
    // A lease being taken is bound a moment before it listens, and refuses connections then.
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (const auto connection = connect_to_lease(name)) {
            return taker_of(connection->get());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return std::nullopt;
}

bool holds_lease(int fd, const std::string& name)
{
    sockaddr_un bound{};
    socklen_t length = sizeof bound;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0 ||
        bound.sun_family != AF_UNIX) {
        return false;
    }
    const auto expected = abstract_address(name);
    return length == expected.length &&
           std::memcmp(&bound.sun_path, &expected.address.sun_path,
                       length - offsetof(sockaddr_un, sun_path)) == 0 &&
           int_option(fd, SO_TYPE) == SOCK_STREAM && int_option(fd, SO_ACCEPTCONN) == 1;
}

std::optional<std::string> listening_name(int fd)
{
    sockaddr_un bound{};
    socklen_t length = sizeof bound;
    constexpr auto k_path_start = offsetof(sockaddr_un, sun_path);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0 ||
        bound.sun_family != AF_UNIX || length <= k_path_start + 1 || bound.sun_path[0] != '\0' ||
        int_option(fd, SO_TYPE) != SOCK_STREAM || int_option(fd, SO_ACCEPTCONN) != 1) {
        return std::nullopt;
    }
    return std::string(bound.sun_path + 1, length - k_path_start - 1);
}

std::optional<std::vector<std::string>> bound_lease_names(std::string_view prefix)
{
    const auto bound = read_bound(prefix);
    if (!bound) {
        return std::nullopt;
    }
    std::vector<std::string> names;
    for (const auto& [name, entry] : *bound) {
        if (entry.held) {
            names.push_back(name);
        }
    }
    return names;
}

} // namespace gpusched::sys
