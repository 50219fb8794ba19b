#include "redis_server.hpp"

#include <gpusched/queue/redis/redis_client.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

const fs::path k_redis_server = "/usr/bin/redis-server";
const fs::path k_redis_cli = "/usr/bin/redis-cli";

} // namespace

RedisServer::RedisServer(std::optional<std::string> password, Persistence persistence)
    : m_password(std::move(password)), m_persistence(persistence)
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

pid_t RedisServer::pid() const
{
    return m_process && m_process->running() ? m_process->pid() : -1;
}

void RedisServer::start()
{
    std::vector<std::string> args = {"--port", std::to_string(m_port), "--bind", "127.0.0.1",
                                     "--dir",  m_dir.path().string()};
    if (m_persistence == Persistence::every_write) {
        args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    } else {
        args.insert(args.end(), {"--appendonly", "no"});
    }
    args.insert(args.end(), {"--save", "", "--daemonize", "no"});
    if (m_password) {
        args.insert(args.end(), {"--requirepass", *m_password});
    }
    m_process =
        std::make_unique<Process>(m_dir, LaunchOptions{args, {}, {}, {}, k_redis_server, {}});
    m_paused = false;
    bool exited = false; // at once, when the port was taken after all
    const bool up = eventually([&] {
        if (m_process->try_wait()) {
            exited = true;
            return true;
        }
        queue::RedisClient client(RedisUrl{"127.0.0.1", m_port, "", m_password, 0},
                                  std::chrono::milliseconds(200));
        return client.connect().ok();
    });
    if (!up || exited) {
        throw std::runtime_error("redis-server did not start: " + m_process->err_so_far());
    }
}

void RedisServer::stop()
{
    if (m_process) {
        resume();
        m_process->signal(SIGTERM);
        // A server that saves for longer than this is wedged: the wait kills it.
        m_process->wait(30s);
        m_process.reset();
    }
}

void RedisServer::kill()
{
    if (m_process) {
        m_process->signal(SIGKILL);
        m_process->wait();
        m_process.reset();
        m_paused = false;
    }
}

void RedisServer::pause()
{
    if (m_process && !m_paused) {
        m_process->signal(SIGSTOP);
        m_paused = true;
    }
}

void RedisServer::resume()
{
    if (m_process && m_paused) {
        m_process->signal(SIGCONT);
        m_paused = false;
    }
}

std::string RedisServer::cli(const std::vector<std::string>& args) const
{
    TempDir dir;
    std::vector<std::string> cli_args = {"-h", "127.0.0.1", "-p", std::to_string(m_port)};
    cli_args.insert(cli_args.end(), args.begin(), args.end());
    LaunchOptions options;
    options.args = cli_args;
    options.program = k_redis_cli;
    if (m_password) {
        options.env["REDISCLI_AUTH"] = *m_password;
    }
    const auto result = run(dir, options, 10s);
    EXPECT_FALSE(result.timed_out)
        << "redis-cli " << fmt::format("{}", fmt::join(args, " ")) << " did not answer within 10 s";
    return result.out;
}

long long RedisServer::info(const std::string& field) const
{
    for (auto line : split_lines(cli({"INFO"}))) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (line.rfind(field + ":", 0) == 0) {
            return std::stoll(line.substr(field.size() + 1));
        }
    }
    return -1;
}

} // namespace gpusched::testing
