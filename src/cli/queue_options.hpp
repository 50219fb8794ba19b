#pragma once

#include <gpusched/redis_url.hpp>

#include <CLI/App.hpp>

#include <optional>
#include <string>

namespace gpusched::cli {

// --redis, --queue and --key-file, shared by submit, worker and queue.
struct QueueOptions {
    std::string redis;
    std::string queue = "default";
    std::optional<std::string> key_file;
};

void add_queue_options(CLI::App& app, QueueOptions& options, bool with_key);

// The server to use, with REDISCLI_AUTH as the password when the URL has none.
RedisUrl redis_url_of(const QueueOptions& options);

// The shared secret in --key-file (a trailing newline is not part of it), if given.
std::optional<std::string> read_key(const QueueOptions& options);

} // namespace gpusched::cli
