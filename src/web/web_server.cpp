#include <gpusched/web/web_server.hpp>

#include "request_facts.hpp"

#include <gpusched/split.hpp>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace gpusched::web {
namespace {

using namespace std::chrono_literals;

// Live pages each hold a thread while open; the pool keeps threads over for everything else.
constexpr std::size_t k_threads = 128;
constexpr int k_most_live_pages = 96;
// A connection that has not been served in this time is cut (ConnectionReaper).
constexpr auto k_most_for_a_connection = std::chrono::seconds(30);
// A live page hears something at least this often, so that proxies and the browser keep the
// stream open, and a page whose reader went away is noticed.
constexpr auto k_heartbeat = 10s;

// What a handler reads of a request: what its route's pattern captured, and its query.
WebRequestParts parts_of(const httplib::Request& request)
{
    WebRequestParts parts;
    for (std::size_t i = 1; i < request.matches.size(); ++i) {
        parts.captured.push_back(request.matches[i].str());
    }
    for (const auto& [name, value] : request.params) {
        parts.query.emplace(name, value); // the first of each name, as get_param_value reads
    }
    return parts;
}

// A handler's answer, copied into httplib's.
void copy_answer(httplib::Response& response, WebAnswer answer)
{
    response.status = answer.status;
    for (const auto& [name, value] : answer.headers) {
        response.set_header(name, value);
    }
    response.set_content(std::move(answer.body), answer.content_type);
}

std::string event_text(const char* name, const std::string& data)
{
    // A JSON document's own line ends would end the event's data: one line each.
    std::string text = fmt::format("event: {}\n", name);
    for (const auto line : split(data, '\n')) {
        if (!line.empty()) {
            text += fmt::format("data: {}\n", line);
        }
    }
    return text + "\n";
}

bool is_action(const httplib::Request& request)
{
    return request.method != "GET" && request.method != "HEAD";
}

// /api/jobs/ID/output: what a job printed.
bool reads_output(const httplib::Request& request)
{
    return request.path.starts_with("/api/jobs/") && request.path.ends_with("/output");
}

} // namespace

WebRequestFacts request_facts(const httplib::Request& request)
{
    return {.method = request.method,
            .path = request.path,
            .action = is_action(request),
            .reads_output = reads_output(request),
            .host = request.get_header_value("Host"),
            .origin = request.get_header_value("Origin"),
            .fetch_site = request.get_header_value("Sec-Fetch-Site"),
            .authorization = request.get_header_value("Authorization"),
            .cookie = request.get_header_value("Cookie"),
            .query_token = request.get_param_value("token")};
}

WebServer::WebServer(LiveState& state, WebServerOptions options)
    : m_state(state), m_options(std::move(options)), m_handlers(state, system_time()),
      m_server(std::make_unique<httplib::Server>())
{
    m_server->new_task_queue = [] { return new httplib::ThreadPool(k_threads); };
    // A slow or silent client is dropped, never waited for: each read and write has its
    // deadline, and a request body has a size limit (no request here needs one).
    m_server->set_read_timeout(5s);
    m_server->set_write_timeout(5s);
    m_server->set_payload_max_length(64 * 1024);
    m_server->set_keep_alive_timeout(5);
    // Not httplib's default SO_REUSEPORT: a second server on a port in use would share it
    // silently, each answering half the requests with its own token.
    m_server->set_socket_options([](int socket) {
        const int yes = 1;
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    add_routes();
}

WebServer::~WebServer() = default;

int WebServer::bind()
{
    errno = 0;
    int port = m_options.port;
    bool bound = false;
    if (port == 0) {
        port = m_server->bind_to_any_port(m_options.address);
        bound = port > 0;
    } else {
        bound = m_server->bind_to_port(m_options.address, port);
    }
    if (!bound) {
        throw std::runtime_error(
            fmt::format("cannot listen on {}:{}: {}", m_options.address, m_options.port,
                        errno != 0 ? std::strerror(errno) : "no such address here"));
    }
    m_reaper = std::make_unique<ConnectionReaper>(port, k_most_for_a_connection);
    return port;
}

void WebServer::serve()
{
    {
        const std::lock_guard lock(m_serving_mutex);
        if (m_stop_asked) {
            return;
        }
        m_serving = true;
        m_reaper->start();
    }
    m_server->listen_after_bind();
    {
        const std::lock_guard lock(m_serving_mutex);
        m_serving = false;
    }
    m_serving_changed.notify_all();
}

void WebServer::stop()
{
    // httplib's stop() acts only on a server that listens already (is_running): one asked
    // while serve() is on its way into listen_after_bind would do nothing, and the server
    // would listen for ever. So it is asked again until serve() has returned.
    std::unique_lock lock(m_serving_mutex);
    m_stop_asked = true;
    while (m_serving) {
        m_server->stop();
        m_serving_changed.wait_for(lock, std::chrono::milliseconds(5));
    }
    lock.unlock();
    if (m_reaper) {
        m_reaper->stop_and_cut_all();
    }
}

void WebServer::add_routes()
{
    auto& server = *m_server;
    server.set_pre_routing_handler(
        [this](const httplib::Request& request, httplib::Response& response) {
            for (const auto& [name, value] : WebHandlers::every_answers_headers()) {
                response.set_header(name, value);
            }
            const auto refused =
                WebHandlers::refusal(decide_web_access(m_options.policy, request_facts(request)));
            if (!refused) {
                return httplib::Server::HandlerResponse::Unhandled;
            }
            copy_answer(response, *refused);
            return httplib::Server::HandlerResponse::Handled;
        });
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& response, std::exception_ptr thrown) {
            copy_answer(response, WebHandlers::thrown(thrown));
        });
    server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
        if (response.body.empty()) {
            copy_answer(response, WebHandlers::unrouted(response.status, request.path));
        }
    });

    using Handler = WebAnswer (WebHandlers::*)(const WebRequestParts&);
    const auto to = [this](Handler handler) {
        return [this, handler](const httplib::Request& request, httplib::Response& response) {
            copy_answer(response, (m_handlers.*handler)(parts_of(request)));
        };
    };
    const auto page = [this](const httplib::Request& request, httplib::Response& response) {
        const bool with_data = page_may_hold_data(m_options.policy, request_facts(request));
        copy_answer(response,
                    m_handlers.page(with_data, request.matches.size() > 1
                                                   ? std::optional(request.matches[1].str())
                                                   : std::nullopt));
    };
    const auto file = [](WebAnswer (*answer)()) {
        return [answer](const httplib::Request&, httplib::Response& response) {
            copy_answer(response, answer());
        };
    };
    server.Get("/", page);
    server.Get(R"(/jobs/(\d{1,18}))", page);
    server.Get("/assets/app.js", file(&WebHandlers::app_js));
    server.Get("/assets/style.css", file(&WebHandlers::style_css));
    server.Get("/assets/icon.svg", file(&WebHandlers::icon_svg));
    server.Get("/favicon.ico", file(&WebHandlers::icon_svg));

    server.Get("/api/status", [this](const httplib::Request&, httplib::Response& response) {
        copy_answer(response, m_handlers.status());
    });
    server.Get("/api/queue", to(&WebHandlers::queue));
    server.Get(R"(/api/jobs/(\d{1,18}))", to(&WebHandlers::job));
    server.Get(R"(/api/jobs/(\d{1,18})/output)", to(&WebHandlers::job_output));
    server.Get("/api/timeline", to(&WebHandlers::timeline));
    add_event_route();
    server.Post(R"(/api/jobs/(\d{1,18})/(cancel|retry))", to(&WebHandlers::job_action));
    server.Post(R"(/api/queue/(pause|resume))", to(&WebHandlers::pause_queue));
    server.Post(R"(/api/workers/([^/]{1,200})/stop)", to(&WebHandlers::stop_worker));
}

void WebServer::add_event_route()
{
    // Each open page holds one stream: what changed is pushed as it is seen (the status and
    // the queue's first page, whole), and a comment every k_heartbeat when nothing did.
    m_server->Get("/api/events", [this](const httplib::Request& request,
                                        httplib::Response& response) {
        if (m_live_pages.fetch_add(1) >= k_most_live_pages) {
            --m_live_pages;
            return copy_answer(response, WebHandlers::error(503, "too many live pages are open"));
        }
        const int peer = request.remote_port;
        m_reaper->keep(peer);
        response.set_header("Cache-Control", "no-store");
        response.set_chunked_content_provider(
            "text/event-stream",
            [this, sent = std::uint64_t{0}, sent_status = std::string(),
             sent_queue = std::string()](std::size_t, httplib::DataSink& sink) mutable {
                if (m_state.stopping()) {
                    return false;
                }
                const auto snapshot =
                    sent == 0 ? m_state.current() : m_state.wait_newer(sent, k_heartbeat);
                std::string events;
                if (snapshot.version == sent) {
                    events = ": still here\n\n";
                } else {
                    if (snapshot.status != sent_status) {
                        events += event_text("status", snapshot.status);
                    }
                    if (!snapshot.queue.empty() && snapshot.queue != sent_queue) {
                        events += event_text("queue", snapshot.queue);
                    }
                    sent = snapshot.version;
                    sent_status = snapshot.status;
                    sent_queue = snapshot.queue;
                }
                return events.empty() || sink.write(events.data(), events.size());
            },
            [this, peer](bool) {
                m_reaper->forget(peer);
                --m_live_pages;
            });
    });
}

} // namespace gpusched::web
