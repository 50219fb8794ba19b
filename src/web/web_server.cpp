#include <gpusched/web/web_server.hpp>

#include "request_facts.hpp"

#include <gpusched/parse_number.hpp>
#include <gpusched/queue/queue_json.hpp>
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
constexpr std::size_t k_most_jobs_a_page = 500;
constexpr std::uint64_t k_output_tail = 64 * 1024;
constexpr std::uint64_t k_most_output = 256 * 1024;
constexpr const char* k_json = "application/json";

void answer_json(httplib::Response& response, std::string body, int status = 200)
{
    response.status = status;
    response.set_content(std::move(body), k_json);
}

void answer_error(httplib::Response& response, int status, const std::string& why)
{
    auto document = json_document("serve");
    document["error"] = why;
    answer_json(response, format_json(document), status);
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

// A number parameter, `fallback` when absent; nothing when it is there and no number.
std::optional<std::size_t> size_param(const httplib::Request& request, const char* name,
                                      std::size_t fallback)
{
    if (!request.has_param(name)) {
        return fallback;
    }
    return parse_number<std::size_t>(request.get_param_value(name));
}

std::optional<std::int64_t> job_id(const httplib::Request& request)
{
    return parse_number<std::int64_t>(request.matches[1].str());
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
    : m_state(state), m_options(std::move(options)), m_server(std::make_unique<httplib::Server>())
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
            const auto decision = decide_web_access(m_options.policy, request_facts(request));
            // Nothing here may be framed by another site, and nothing guessed from its bytes;
            // no address of this server's reaches another in a Referer. No CORS header is ever
            // answered: no other origin's script reads an answer or sends the bearer token.
            response.set_header("X-Frame-Options", "DENY");
            response.set_header("X-Content-Type-Options", "nosniff");
            response.set_header("Referrer-Policy", "no-referrer");
            if (decision.allowed()) {
                return httplib::Server::HandlerResponse::Unhandled;
            }
            answer_error(response, decision.status, decision.why);
            return httplib::Server::HandlerResponse::Handled;
        });

    // The queue's store away (Redis stopped, the database locked) fails the one request.
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& response, std::exception_ptr thrown) {
            try {
                std::rethrow_exception(thrown);
            } catch (const std::exception& error) {
                answer_error(response, 503, error.what());
            } catch (...) {
                answer_error(response, 500, "an unknown error");
            }
        });

    // What no route answers, in the API's words.
    server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
        if (response.body.empty()) {
            answer_error(response, response.status,
                         response.status == 404 ? fmt::format("nothing here at {}", request.path)
                                                : "the request could not be read");
        }
    });

    add_page_routes();
    server.Get("/api/status", [this](const httplib::Request&, httplib::Response& response) {
        answer_json(response, m_state.current().status);
    });
    server.Get("/api/queue", [this](const httplib::Request& request, httplib::Response& response) {
        if (!m_state.has_queue()) {
            return answer_error(response, 404, "this server shows no queue");
        }
        const auto from = size_param(request, "from", 0);
        const auto count = size_param(request, "count", LiveState::k_queue_page);
        if (!from || !count || *count > k_most_jobs_a_page) {
            return answer_error(response, 400,
                                fmt::format("from and count are whole numbers, count at most {}",
                                            k_most_jobs_a_page));
        }
        if (*from == 0 && *count == LiveState::k_queue_page) {
            return answer_json(response, m_state.current().queue);
        }
        auto document = json_document("serve");
        const auto& name = m_state.sources().queue_name;
        m_state.with_queue([&](queue::QueueBackend& backend) {
            const auto listing = backend.list(
                {.queued = *count, .queued_from = *from, .recent = LiveState::k_queue_page});
            queue::add_listing_json(listing, name, backend.describe(), *from, document);
        });
        document["error"] = nullptr;
        answer_json(response, format_json(document));
    });
    server.Get(R"(/api/jobs/(\d{1,18}))", [this](const httplib::Request& request,
                                                 httplib::Response& response) {
        if (!m_state.has_queue()) {
            return answer_error(response, 404, "this server shows no queue");
        }
        auto [status, document] = job_answer(job_id(request).value_or(0));
        answer_json(response, format_json(document), status);
    });
    server.Get(R"(/api/jobs/(\d{1,18})/output)", [this](const httplib::Request& request,
                                                        httplib::Response& response) {
        if (!m_state.has_queue()) {
            return answer_error(response, 404, "this server shows no queue");
        }
        const auto stream = request.get_param_value("stream");
        if (stream != "stdout" && stream != "stderr") {
            return answer_error(response, 400, "stream is stdout or stderr");
        }
        const bool out = stream == "stdout";
        const auto id = job_id(request);
        auto document = json_document("serve");
        std::optional<std::string> problem;
        m_state.with_queue([&](queue::QueueBackend& backend) {
            const auto jobs = backend.jobs({id.value_or(0)});
            if (jobs.empty()) {
                problem = fmt::format("no job {} in this queue", *id);
                return;
            }
            const auto sizes = backend.output_sizes(jobs.front());
            const auto size = out ? sizes.out : sizes.err;
            // Without ?from=, the tail: a page that follows a job asks on from there.
            auto from =
                request.has_param("from")
                    ? parse_number<std::uint64_t>(request.get_param_value("from"))
                    : std::optional<std::uint64_t>(size > k_output_tail ? size - k_output_tail : 0);
            if (!from) {
                problem = "from is a byte offset";
                return;
            }
            const auto read = backend.output(jobs.front(), out ? *from : sizes.out,
                                             out ? sizes.err : *from, k_most_output);
            auto text = out ? read.out : read.err;
            document["stream"] = stream;
            document["from"] = *from;
            document["next"] = *from + text.size();
            document["complete"] = read.complete;
            document["text"] = std::move(text);
        });
        if (problem) {
            return answer_error(response, problem->starts_with("no job") ? 404 : 400, *problem);
        }
        answer_json(response, format_json(document));
    });
    server.Get(
        "/api/timeline", [this](const httplib::Request& request, httplib::Response& response) {
            const auto hours = size_param(request, "hours", 6);
            if (!hours || *hours == 0 || *hours > 24) {
                return answer_error(response, 400, "hours is a whole number from 1 to 24");
            }
            answer_json(response, m_state.timeline_document(static_cast<unsigned>(*hours)));
        });
    add_event_route();
    add_action_routes();
}

void WebServer::add_event_route()
{
    // Each open page holds one stream: what changed is pushed as it is seen (the status and
    // the queue's first page, whole), and a comment every k_heartbeat when nothing did.
    m_server->Get("/api/events", [this](const httplib::Request& request,
                                        httplib::Response& response) {
        if (m_live_pages.fetch_add(1) >= k_most_live_pages) {
            --m_live_pages;
            return answer_error(response, 503, "too many live pages are open");
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

void WebServer::add_action_routes()
{
    // Each action acts only on what the serving user owns: their jobs, their workers, and the
    // pauses of the queue they serve.
    m_server->Post(R"(/api/jobs/(\d{1,18})/(cancel|retry))",
                   [this](const httplib::Request& request, httplib::Response& response) {
                       const auto id = job_id(request).value_or(0);
                       const auto verb = request.matches[2].str();
                       if (!m_state.has_queue()) {
                           return answer_error(response, 404, "this server shows no queue");
                       }
                       auto [status, said] = m_state.with_queue(
                           [&](queue::QueueBackend& queue) { return act_on_job(queue, id, verb); });
                       auto document = json_document("serve");
                       document[status == 200 ? "done" : "error"] = said;
                       answer_json(response, format_json(document), status);
                   });
    m_server->Post(R"(/api/queue/(pause|resume))",
                   [this](const httplib::Request& request, httplib::Response& response) {
                       if (!m_state.has_queue()) {
                           return answer_error(response, 404, "this server shows no queue");
                       }
                       const bool pause = request.matches[1].str() == "pause";
                       const auto gpu = request.get_param_value("gpu");
                       m_state.with_queue([&](queue::QueueBackend& queue) {
                           pause ? queue.pause(gpu) : queue.resume(gpu);
                       });
                       auto document = json_document("serve");
                       document["done"] = fmt::format("{} {}", pause ? "paused" : "resumed",
                                                      gpu.empty() ? "the queue" : "GPU " + gpu);
                       answer_json(response, format_json(document));
                   });
    m_server->Post(R"(/api/workers/([^/]{1,200})/stop)", [this](const httplib::Request& request,
                                                                httplib::Response& response) {
        if (!m_state.has_queue()) {
            return answer_error(response, 404, "this server shows no queue");
        }
        const auto worker = request.matches[1].str();
        const auto& user = m_state.sources().user;
        auto [status, said] = m_state.with_queue([&](queue::QueueBackend& queue) {
            for (const auto& listed : queue.list({}).workers) {
                if (listed.id != worker) {
                    continue;
                }
                if (!listed.user.empty() && listed.user != user) {
                    return std::pair{
                        403, fmt::format("worker {} is {}'s, not {}'s", worker, listed.user, user)};
                }
                queue.ask_worker_to_stop(worker, false);
                return std::pair{200, fmt::format("worker {} asked to stop: it finishes its "
                                                  "running jobs and starts none",
                                                  worker)};
            }
            return std::pair{404, fmt::format("no worker {} serves this queue", worker)};
        });
        auto document = json_document("serve");
        document[status == 200 ? "done" : "error"] = said;
        answer_json(response, format_json(document), status);
    });
}

std::pair<int, Json> WebServer::job_answer(std::int64_t id)
{
    auto document = json_document("serve");
    const bool found = m_state.with_queue([&](queue::QueueBackend& backend) {
        const auto jobs = backend.jobs({id});
        if (jobs.empty()) {
            return false;
        }
        document["job"] = queue::job_json(jobs.front());
        const auto sizes = backend.output_sizes(jobs.front());
        document["output"] = {{"stdout_bytes", sizes.out}, {"stderr_bytes", sizes.err}};
        return true;
    });
    if (!found) {
        document["error"] = fmt::format("no job {} in this queue", id);
        return {404, std::move(document)};
    }
    return {200, std::move(document)};
}

std::pair<int, std::string> WebServer::act_on_job(queue::QueueBackend& queue, std::int64_t id,
                                                  const std::string& verb) const
{
    const auto jobs = queue.jobs({id});
    if (jobs.empty()) {
        return {404, fmt::format("no job {} in this queue", id)};
    }
    const auto& job = jobs.front();
    const auto& sources = m_state.sources();
    const bool own = job.submitter.uid >= 0
                         ? job.submitter.uid == static_cast<std::int64_t>(sources.uid)
                         : job.submitter.user == sources.user;
    if (!own) {
        return {403, fmt::format("job {} is {}'s: only {}'s own jobs are acted on here", id,
                                 job.submitter.describe(), sources.user)};
    }
    if (verb == "retry") {
        if (auto retried = queue.retry(id); !retried) {
            return {409, retried.message()};
        }
        return {200, fmt::format("job {} queued again", id)};
    }
    switch (queue.cancel(id)) {
    case queue::CancelOutcome::removed:
        return {200, fmt::format("job {} cancelled", id)};
    case queue::CancelOutcome::stopping:
        return {200, fmt::format("job {} is being stopped", id)};
    case queue::CancelOutcome::already_ended:
        return {409, fmt::format("job {} has ended already", id)};
    case queue::CancelOutcome::unknown:
        break;
    }
    return {404, fmt::format("no job {} in this queue", id)};
}

} // namespace gpusched::web
