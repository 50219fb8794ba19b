#pragma once

#include "harness.hpp"

#include <memory>
#include <optional>
#include <string>

namespace gpusched::testing {

// A real redis-server (Debian's package) on a free loopback port, persisting every write to
// an append-only file in its own directory, so it can be stopped and started again with its
// data. Stopped at the end of the test.
class RedisServer {
public:
    // With a password, clients must log in (AUTH).
    explicit RedisServer(std::optional<std::string> password = std::nullopt);
    ~RedisServer();

    int port() const { return m_port; }
    std::string url() const;
    // A graceful stop (SIGTERM: the data is on disk), and a start on the same port and data.
    void stop();
    void start();

private:
    TempDir m_dir;
    int m_port = 0;
    std::optional<std::string> m_password;
    std::unique_ptr<Process> m_process;
};

} // namespace gpusched::testing
