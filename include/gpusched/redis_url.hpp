#pragma once

#include <gpusched/errors.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// Where a Redis server is and how to log in: redis://[user:password@]host[:port][/db].
struct RedisUrl {
    std::string host;
    int port = 6379;
    std::string user;                    // empty: the default user
    std::optional<std::string> password; // none: no AUTH
    int db = 0;
};

// Parses `url`. User and password may be percent-encoded; an IPv6 host is written in
// brackets. Without a password in the URL, `rediscli_auth` (the REDISCLI_AUTH variable that
// redis-cli honours) is the password, so it never has to appear on a command line.
Result<RedisUrl> parse_redis_url(std::string_view url,
                                 const std::optional<std::string>& rediscli_auth = std::nullopt);

// The URL without its password, for messages.
std::string describe_redis_url(const RedisUrl& url);

} // namespace gpusched
