#include "redis_server.hpp"

#include <gpusched/queue/redis_client.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>

namespace gpusched::testing {
namespace {

const fs::path k_redis_server = "/usr/bin/redis-server";

int free_port()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        throw std::runtime_error("cannot find a free port");
    }
    close(fd);
    return ntohs(address.sin_port);
}

} // namespace

RedisServer::RedisServer(std::optional<std::string> password) : m_password(std::move(password))
{
    if (!fs::exists(k_redis_server)) {
        throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");
    }
    // A port found free may be taken by another test before the server binds it: try another.
    for (int attempt = 1;; ++attempt) {
        m_port = free_port();
        try {
            start();
            return;
        } catch (const std::runtime_error&) {
            stop();
            if (attempt == 3) {
                throw;
            }
        }
    }
}

RedisServer::~RedisServer()
{
    stop();
}

std::string RedisServer::url() const
{
    return fmt::format("redis://127.0.0.1:{}", m_port);
}

void RedisServer::start()
{
    std::vector<std::string> args = {"--port",        std::to_string(m_port),
                                     "--bind",        "127.0.0.1",
                                     "--dir",         m_dir.path().string(),
                                     "--appendonly",  "yes",
                                     "--appendfsync", "always",
                                     "--save",        "",
                                     "--daemonize",   "no"};
    if (m_password) {
        args.insert(args.end(), {"--requirepass", *m_password});
    }
    m_process =
        std::make_unique<Process>(m_dir, LaunchOptions{args, {}, {}, {}, k_redis_server, {}});
    bool exited = false; // at once, when the port was taken after all
    const bool up = eventually([&] {
        if (m_process->try_wait()) {
            exited = true;
            return true;
        }
        queue::RedisClient client(RedisUrl{"127.0.0.1", m_port, "", m_password, 0},
                                  std::chrono::milliseconds(200));
        return client.connect();
    });
    if (!up || exited) {
        throw std::runtime_error("redis-server did not start: " + m_process->err_so_far());
    }
}

void RedisServer::stop()
{
    if (m_process) {
        m_process->signal(SIGTERM);
        m_process->wait();
        m_process.reset();
    }
}

} // namespace gpusched::testing
