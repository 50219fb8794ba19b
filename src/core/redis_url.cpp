#include <gpusched/redis_url.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <charconv>

namespace gpusched {
namespace {

constexpr std::string_view k_scheme = "redis://";

std::optional<std::string> percent_decode(std::string_view text)
{
    std::string decoded;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            decoded += text[i];
            continue;
        }
        const auto hex = text.substr(i + 1, 2);
        unsigned value = 0;
        if (hex.size() != 2 ||
            std::from_chars(hex.data(), hex.data() + 2, value, 16).ptr != hex.data() + 2) {
            return std::nullopt;
        }
        decoded += static_cast<char>(value);
        i += 2;
    }
    return decoded;
}

} // namespace

Result<RedisUrl> parse_redis_url(std::string_view url,
                                 const std::optional<std::string>& rediscli_auth)
{
    const auto bad = [&](std::string_view why) {
        return Failure{fmt::format(
            "--redis {}: {} (expected redis://[user:password@]host[:port][/db])", url, why)};
    };
    if (!url.starts_with(k_scheme)) {
        return bad("not a redis:// URL");
    }
    auto rest = url.substr(k_scheme.size());
    RedisUrl parsed;

    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = rest.substr(0, at);
        rest = rest.substr(at + 1);
        const auto colon = userinfo.find(':');
        const auto user = percent_decode(userinfo.substr(0, colon));
        if (!user) {
            return bad("bad percent-encoding in the user name");
        }
        parsed.user = *user;
        if (colon != std::string_view::npos) {
            const auto password = percent_decode(userinfo.substr(colon + 1));
            if (!password) {
                return bad("bad percent-encoding in the password");
            }
            parsed.password = *password;
        }
    }
    if (!parsed.password && rediscli_auth && !rediscli_auth->empty()) {
        parsed.password = *rediscli_auth;
    }

    auto authority = rest;
    std::string_view path;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        authority = rest.substr(0, slash);
        path = rest.substr(slash + 1);
    }
    std::string_view port;
    if (authority.starts_with('[')) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) {
            return bad("an IPv6 address without its closing bracket");
        }
        parsed.host = std::string(authority.substr(1, close - 1));
        const auto after = authority.substr(close + 1);
        if (!after.empty() && !after.starts_with(':')) {
            return bad("something after the IPv6 address");
        }
        port = after.empty() ? after : after.substr(1);
    } else {
        const auto colon = authority.find(':');
        parsed.host = std::string(authority.substr(0, colon));
        port = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon + 1);
    }
    if (parsed.host.empty()) {
        return bad("no host");
    }
    if (!port.empty() || authority.ends_with(':')) {
        const auto number = parse_number<int>(port);
        if (!number || *number < 1 || *number > 65535) {
            return bad(fmt::format("port '{}' is not a number from 1 to 65535", port));
        }
        parsed.port = *number;
    }
    if (!path.empty()) {
        const auto db = parse_number<int>(path);
        if (!db || *db < 0) {
            return bad(fmt::format("database '{}' is not a number", path));
        }
        parsed.db = *db;
    }
    return parsed;
}

std::string describe_redis_url(const RedisUrl& url)
{
    const bool ipv6 = url.host.find(':') != std::string::npos;
    return fmt::format("redis://{}{}{}{}:{}/{}", url.user.empty() ? "" : url.user + "@",
                       ipv6 ? "[" : "", url.host, ipv6 ? "]" : "", url.port, url.db);
}

} // namespace gpusched
