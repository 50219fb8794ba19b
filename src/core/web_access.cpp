#include <gpusched/web_access.hpp>

#include <gpusched/parse_number.hpp>

#include <cstdint>
#include <string>

namespace gpusched {
namespace {

// "HOST:PORT" or "[V6]:PORT" without the port.
std::string_view without_port(std::string_view host)
{
    if (host.starts_with('[')) {
        // "[::1]" or "[::1]:PORT"; anything else after the bracket is no address.
        const auto end = host.find(']');
        if (end == std::string_view::npos || (end + 1 < host.size() && host[end + 1] != ':')) {
            return host;
        }
        return host.substr(1, end - 1);
    }
    const auto colon = host.rfind(':');
    if (colon != std::string_view::npos && host.find(':') == colon) {
        return host.substr(0, colon);
    }
    return host;
}

bool is_loopback_ipv4(std::string_view address)
{
    if (!address.starts_with("127.")) {
        return false;
    }
    int parts = 0;
    std::size_t begin = 0;
    while (begin <= address.size()) {
        const auto end = std::min(address.find('.', begin), address.size());
        const auto part = parse_number<unsigned>(address.substr(begin, end - begin));
        if (!part || *part > 255) {
            return false;
        }
        ++parts;
        begin = end + 1;
    }
    return parts == 4;
}

// The token of "Bearer TOKEN" (the scheme's name in any case, RFC 9110), else "".
std::string_view bearer_token(std::string_view authorization)
{
    constexpr std::string_view scheme = "bearer ";
    if (authorization.size() < scheme.size()) {
        return {};
    }
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        const char c = authorization[i];
        if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) {
            return {};
        }
    }
    return authorization.substr(scheme.size());
}

// What the page itself is made of, which is built into the binary and holds none of the
// queue's or the leases' data: everything else than the API.
bool reads_data(std::string_view path)
{
    return path.starts_with("/api/");
}

// Why a request without the bearer token is refused, saying where the token is not taken from
// when the request tried one of those places (a script or a page of an older version).
std::string without_token(std::string why, const WebRequestFacts& request)
{
    if (!request.query_token.empty() ||
        request.cookie.find("gpusched_token") != std::string::npos) {
        why += " (as Authorization: Bearer; a cookie or ?token= authorizes nothing)";
    }
    return why;
}

} // namespace

bool is_loopback_host(std::string_view host)
{
    const auto name = without_port(host);
    return name == "localhost" || name == "::1" || is_loopback_ipv4(name);
}

bool same_token(std::string_view presented, std::string_view token)
{
    if (presented.size() != token.size() || token.empty()) {
        return false;
    }
    std::uint8_t difference = 0;
    for (std::size_t i = 0; i < token.size(); ++i) {
        difference |= static_cast<std::uint8_t>(presented[i] ^ token[i]);
    }
    return difference == 0;
}

WebDecision decide_web_access(const WebAccessPolicy& policy, const WebRequestFacts& request)
{
    // A page of another site whose name was made to resolve to 127.0.0.1 sends its own
    // name: only those who asked for the loopback address itself are answered.
    if (policy.loopback_only && !is_loopback_host(request.host)) {
        return {403, "this server answers requests to a loopback address only (the Host "
                     "header names another)"};
    }
    // Only a header, which a browser sends only where this server's own script sends it: it
    // never reaches another server on this host, as a cookie of 127.0.0.1 does.
    const bool has_token = same_token(bearer_token(request.authorization), policy.token);
    if (!policy.loopback_only && !has_token && reads_data(request.path)) {
        return {401, without_token("this server listens beyond loopback: open the address it "
                                   "printed at start, with its token",
                                   request)};
    }
    // Every local user may read the page on loopback, as they may run `ps`: what runs, not
    // what it printed, which is its submitter's (a queue's output files are theirs alone).
    if (request.reads_output && !policy.share_output && !has_token) {
        return {403, without_token("a job's output is its submitter's: open the address this "
                                   "server printed at start (its token shows it), or start it "
                                   "with --share-output",
                                   request)};
    }
    if (!request.action) {
        return {};
    }
    if (!policy.allow_actions) {
        return {403, "this server is read-only: start it with --allow-actions to cancel, "
                     "retry, pause or resume"};
    }
    if (request.method != "POST") {
        return {405, "an action is a POST"};
    }
    // A form or script of another site can post here from the user's browser: browsers say
    // where a request comes from, and only this server's own page may act.
    const bool same_origin = request.origin.empty() || request.origin == "http://" + request.host;
    const bool same_site = request.fetch_site.empty() || request.fetch_site == "same-origin";
    if (!same_origin || !same_site) {
        return {403, "an action must come from this server's own page"};
    }
    if (!has_token) {
        return {401,
                without_token("an action needs the token this server printed at start", request)};
    }
    return {};
}

bool page_may_hold_data(const WebAccessPolicy& policy, const WebRequestFacts& request)
{
    auto reading = request;
    reading.method = "GET";
    reading.path = "/api/status";
    reading.action = false;
    reading.reads_output = false;
    return decide_web_access(policy, reading).allowed();
}

} // namespace gpusched
