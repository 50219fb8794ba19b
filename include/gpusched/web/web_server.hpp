#pragma once

#include <gpusched/web_access.hpp>
#include <gpusched/web/connection_reaper.hpp>
#include <gpusched/web/live_state.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
struct Request;
}

namespace gpusched::web {

struct WebServerOptions {
    std::string address = "127.0.0.1";
    int port = 8787; // 0: any free port
    WebAccessPolicy policy;
};

// `gpusched serve`'s HTTP side (docs/serve.md): the page and its assets from the binary, the
// JSON API over LiveState, live changes as Server-Sent Events, and the actions when allowed.
// Every request is checked by decide_web_access first; no path outside the few it knows is
// served, and nothing from the file system.
class WebServer {
public:
    WebServer(LiveState& state, WebServerOptions options);
    ~WebServer();
    WebServer(const WebServer&) = delete;
    WebServer& operator=(const WebServer&) = delete;

    // Takes the address and port; throws std::runtime_error naming them when it cannot.
    // The port taken (the one asked, or the one the system chose for 0).
    int bind();
    // Serves until stop(), which may come from any thread at any time, before serve() too.
    void serve();
    void stop();

private:
    void add_routes();
    // The page and its files (web_pages.cpp).
    void add_page_routes();
    // The page for `request` (/ or /jobs/ID): with the server's last look in it, where the
    // request may read it (page_may_hold_data), so that its first paint shows it.
    std::string page_html(const httplib::Request& request);
    void add_event_route();
    void add_action_routes();
    // /api/jobs/ID's answer: its HTTP status and document (the job, or why not).
    std::pair<int, Json> job_answer(std::int64_t id);
    // Cancels or retries job `id`, where it is the serving user's: the HTTP status and what
    // was done, or why not.
    std::pair<int, std::string> act_on_job(queue::QueueBackend& queue, std::int64_t id,
                                           const std::string& verb) const;

    LiveState& m_state;
    WebServerOptions m_options;
    std::unique_ptr<httplib::Server> m_server;
    std::unique_ptr<ConnectionReaper> m_reaper; // once bound
    std::atomic<int> m_live_pages{0};
    // Whether serve() listens, and whether stop() was asked: see stop().
    std::mutex m_serving_mutex;
    std::condition_variable m_serving_changed;
    bool m_serving = false;
    bool m_stop_asked = false;
};

} // namespace gpusched::web
