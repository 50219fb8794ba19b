#include "queue_options.hpp"

#include "help_format.hpp"
#include "option_values.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/queue/redis/redis_queue.hpp>
#include <gpusched/sys/state_directory.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpusched::cli {

void add_queue_options(CLI::App& app, QueueOptions& options, bool with_key)
{
    auto* redis =
        app.add_option("--redis", options.redis,
                       "The Redis server of a queue shared by several machines: "
                       "redis://[user:password@]host[:port][/db] (the password may come from "
                       "$REDISCLI_AUTH instead); without it the queue is local")
            ->type_name("URL")
            ->envname("GPUSCHED_REDIS")
            ->group(k_queue_group);
    app.add_option("--db", options.database,
                   "The local queue's SQLite database (default: $XDG_STATE_HOME/gpusched/"
                   "queue.db, else ~/.local/state/gpusched/queue.db); each user keeps their own: "
                   "submit and worker refuse one another user can write")
        ->type_name("FILE")
        ->envname("GPUSCHED_DB")
        ->group(k_queue_group)
        ->excludes(redis);
    app.add_option("--queue", options.queue, "The queue's name: several can share one server")
        ->type_name("NAME")
        ->group(k_queue_group)
        ->envname("GPUSCHED_QUEUE")
        ->capture_default_str();
    if (with_key) {
        app.add_option("--key-file", options.key_file,
                       "A file holding the secret that signs jobs (HMAC-SHA256); a worker with "
                       "a key runs only jobs signed with it")
            ->type_name("FILE")
            ->group(k_queue_group)
            ->envname("GPUSCHED_KEY_FILE");
    }
}

RedisUrl redis_url_of(const QueueOptions& options)
{
    if (const auto name = queue::check_queue_name(options.queue); !name) {
        throw UsageError(name.message());
    }
    const char* auth = std::getenv("REDISCLI_AUTH");
    return value_or_usage_error(parse_redis_url(
        options.redis, auth != nullptr ? std::optional<std::string>(auth) : std::nullopt));
}

std::filesystem::path local_database_of(const QueueOptions& options)
{
    if (const auto name = queue::check_queue_name(options.queue); !name) {
        throw UsageError(name.message());
    }
    if (options.key_file) {
        throw UsageError("--key-file signs the jobs of a Redis queue; a local queue is guarded "
                         "by its database's permissions");
    }
    const auto database = local_database_named(options);
    if (!database) {
        throw UsageError("no place for the local queue: set HOME or XDG_STATE_HOME, or give --db");
    }
    if (!options.database.empty()) {
        return *database;
    }
    const auto state = database->parent_path();
    std::error_code error;
    if (std::filesystem::create_directories(state, error)) {
        // The queue's commands and outputs are the user's own.
        std::filesystem::permissions(state, std::filesystem::perms::owner_all, error);
    }
    if (error) {
        throw UsageError(fmt::format("cannot make {}: {}", state.string(), error.message()));
    }
    return *database;
}

std::optional<std::filesystem::path> local_database_named(const QueueOptions& options)
{
    if (!options.database.empty()) {
        return options.database;
    }
    const auto state = sys::state_directory();
    if (!state) {
        return std::nullopt;
    }
    return *state / "queue.db";
}

void add_connect_timeout_option(CLI::App& app, double& seconds, const std::string& description)
{
    app.add_option("--connect-timeout", seconds, description)
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str()
        ->envname("GPUSCHED_CONNECT_TIMEOUT");
}

std::optional<std::string> read_key(const QueueOptions& options)
{
    if (!options.key_file) {
        return std::nullopt;
    }
    const auto& path = *options.key_file;
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw UsageError(fmt::format("--key-file {}: cannot be read", path));
    }
    std::ostringstream contents;
    contents << file.rdbuf();
    auto key = contents.str();
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) {
        key.pop_back();
    }
    if (key.empty()) {
        throw UsageError(fmt::format("--key-file {}: the file is empty", path));
    }
    struct stat status {};
    if (stat(path.c_str(), &status) == 0 && (status.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        spdlog::warn("--key-file {}: others may read it (mode {:04o}); chmod 600 it", path,
                     status.st_mode & 07777);
    }
    return key;
}

} // namespace gpusched::cli
