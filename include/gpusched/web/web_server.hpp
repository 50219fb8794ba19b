#pragma once

#include <gpusched/web_access.hpp>
#include <gpusched/web/connection_reaper.hpp>
#include <gpusched/web/live_state.hpp>
#include <gpusched/web/web_handlers.hpp>

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
    // Binds each path to its handler (WebHandlers); the live stream is bound here whole, since
    // its answer is no value but a stream that lasts.
    void add_routes();
    void add_event_route();

    LiveState& m_state;
    WebServerOptions m_options;
    WebHandlers m_handlers;
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
