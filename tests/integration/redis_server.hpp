#pragma once

#include "harness.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::testing {

// Whether a server keeps its data across a crash.
enum class Persistence {
    every_write, // an append-only file synced on every write: a SIGKILL loses nothing
    none,        // memory only: a server killed and started again is empty
};

// A real redis-server (Debian's package) on a free loopback port, in its own directory, so it
// can be stopped and started again (with its data, when it persists). Stopped at the end of
// the test.
class RedisServer {
public:
    // With a password, clients must log in (AUTH).
    explicit RedisServer(std::optional<std::string> password = std::nullopt,
                         Persistence persistence = Persistence::every_write);
    explicit RedisServer(Persistence persistence) : RedisServer(std::nullopt, persistence) {}
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    int port() const { return m_port; }
    std::string url() const;
    // The server's pid while it runs, else -1.
    pid_t pid() const;
    // A graceful stop (SIGTERM: the data is on disk), and a start on the same port and data.
    void stop();
    void start();
    // A crash: SIGKILL, reaped at once. What it had not written to disk is gone.
    void kill();
    // SIGSTOP: connections stay open and nothing answers, as on a wedged or unreachable host;
    // and SIGCONT. A paused server is resumed before it is stopped.
    void pause();
    void resume();
    // `redis-cli -p PORT ARGS...`: its stdout (e.g. CONFIG SET, INFO, HGETALL, DEL, RPUSH).
    // A failing or hanging redis-cli fails the test.
    std::string cli(const std::vector<std::string>& args) const;
    // One field of INFO (e.g. "total_connections_received"), or -1 where it is missing.
    long long info(const std::string& field) const;

private:
    TempDir m_dir;
    int m_port = 0;
    std::optional<std::string> m_password;
    Persistence m_persistence;
    std::unique_ptr<Process> m_process;
    bool m_paused = false;
};

} // namespace gpusched::testing
