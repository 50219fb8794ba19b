#pragma once

#include <gpusched/redis_url.hpp>

#include <CLI/App.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace gpusched::cli {

// --redis or --db, --queue and --key-file, shared by submit, worker and queue. Without
// --redis, the queue is local: kept in an SQLite database on this machine.
struct QueueOptions {
    std::string redis;
    std::string database;
    std::string queue = "default";
    std::optional<std::string> key_file;

    bool is_local() const { return redis.empty(); }
};

void add_queue_options(CLI::App& app, QueueOptions& options, bool with_key);

// The server to use, with REDISCLI_AUTH as the password when the URL has none.
RedisUrl redis_url_of(const QueueOptions& options);

// The local queue's database: --db, else $XDG_STATE_HOME/gpusched/queue.db (its directory
// made, 0700, when missing). A UsageError when neither can be had, or with --key-file.
std::filesystem::path local_database_of(const QueueOptions& options);
// The same path, made of nothing: none when neither --db nor a place for the default can be
// had. For a look that must leave no trace (the shells' completion).
std::optional<std::filesystem::path> local_database_named(const QueueOptions& options);

// The shared secret in --key-file (a trailing newline is not part of it), if given.
// --connect-timeout (GPUSCHED_CONNECT_TIMEOUT): how long a command that rides out a Redis out
// of reach (submit, wait) keeps trying before it exits with 75. `seconds` holds the default.
void add_connect_timeout_option(CLI::App& app, double& seconds, const std::string& description);
std::optional<std::string> read_key(const QueueOptions& options);

} // namespace gpusched::cli
