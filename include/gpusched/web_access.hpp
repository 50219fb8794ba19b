#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// Who may ask what of `gpusched serve` (docs/serve.md). Read-only and loopback-only unless
// told otherwise: anyone who can reach a port could otherwise read every user's commands, and
// any web page in a browser on this machine could post to it.
struct WebAccessPolicy {
    bool loopback_only = true;  // it listens on a loopback address only
    bool allow_actions = false; // --allow-actions: cancel, retry, pause, resume
    std::string token;          // printed at start; presented as `Authorization: Bearer`
    bool share_output = false;  // --share-output: jobs' output readable without the token
};

// What a request says of itself, as far as access goes.
struct WebRequestFacts {
    std::string method;        // "GET", "POST", ...
    std::string path;          // "/api/status", without the query
    bool action = false;       // it would change something (an action's path)
    bool reads_output = false; // it reads a job's stdout or stderr
    std::string host;          // the Host header
    std::string origin;        // the Origin header, "" when absent
    std::string fetch_site;    // the Sec-Fetch-Site header, "" when absent
    std::string authorization; // the Authorization header: "Bearer TOKEN" presents the token
    // Where a request may also carry the token, and which authorize nothing: a browser sends
    // a cookie of 127.0.0.1 to every server there whatever its port (a colleague's notebook
    // through the same ssh -L receives it), and an address is kept in histories and logs.
    // Read only to say so in the refusal.
    std::string cookie;      // the Cookie header
    std::string query_token; // ?token=, as older versions printed it
};

// Allowed (status 0), or the HTTP status to answer and why, for the answer's body.
struct WebDecision {
    int status = 0;
    std::string why;
    bool allowed() const { return status == 0; }
};

WebDecision decide_web_access(const WebAccessPolicy& policy, const WebRequestFacts& request);

// Whether the page served to `request` may hold the data of the API (the server's last look,
// so that its first paint shows it): where the same request for /api/status would be
// answered. Beyond loopback a browser's request for the page carries no token (it is in the
// address's fragment): that page holds none, and its script asks for the data with the token.
bool page_may_hold_data(const WebAccessPolicy& policy, const WebRequestFacts& request);

// True when a Host header names a loopback address (127.0.0.0/8, ::1, localhost), with or
// without a port: what a browser sends to a server that listens there. A name that resolves
// there by DNS is not one, so that a page of another site rebound to 127.0.0.1 reads nothing.
bool is_loopback_host(std::string_view host);

// Compares in time that does not depend on where the two differ.
bool same_token(std::string_view presented, std::string_view token);

} // namespace gpusched
