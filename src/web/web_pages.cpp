#include <gpusched/web/web_server.hpp>

#include "request_facts.hpp"
#include "web_assets.hpp"

#include <gpusched/parse_number.hpp>
#include <gpusched/web_page.hpp>

#include <httplib.h>

#include <exception>

namespace gpusched::web {
namespace {

// What the page's timeline shows first (its choice of hours says so too).
constexpr unsigned k_first_timeline_hours = 6;

void answer_file(httplib::Response& response, std::string_view file, const char* type)
{
    response.set_content(std::string(file), type);
}

} // namespace

void WebServer::add_page_routes()
{
    // No cookie is set: a browser would send it to every server on this host, whatever its
    // port. The page's script takes the token from the address (#token=, which no browser
    // sends anywhere, or an older version's ?token=) into this tab's sessionStorage.
    const auto page = [this](const httplib::Request& request, httplib::Response& response) {
        response.set_header("Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
        response.set_header("Cache-Control", "no-store");
        response.set_content(page_html(request), "text/html; charset=utf-8");
    };
    m_server->Get("/", page);
    m_server->Get(R"(/jobs/(\d{1,18}))", page);
    m_server->Get("/assets/app.js", [](const httplib::Request&, httplib::Response& response) {
        answer_file(response, k_app_js, "text/javascript; charset=utf-8");
    });
    m_server->Get("/assets/style.css", [](const httplib::Request&, httplib::Response& response) {
        answer_file(response, k_style_css, "text/css; charset=utf-8");
    });
    // The page names its icon; /favicon.ico is where a browser looks for one of a document
    // that names none (an answer of the API opened in a tab).
    const auto icon = [](const httplib::Request&, httplib::Response& response) {
        answer_file(response, k_icon_svg, "image/svg+xml");
    };
    m_server->Get("/assets/icon.svg", icon);
    m_server->Get("/favicon.ico", icon);
}

std::string WebServer::page_html(const httplib::Request& request)
{
    if (!page_may_hold_data(m_options.policy, request_facts(request))) {
        return std::string(k_index_html);
    }
    // The documents the page's script would ask for first, as their requests answer them.
    const auto snapshot = m_state.current();
    const auto or_null = [](const std::string& document) {
        return document.empty() ? std::string("null") : document;
    };
    std::string state = "{\"status\": " + or_null(snapshot.status);
    if (request.matches.size() > 1) {
        // What /api/jobs/ID would answer, its errors too.
        Json job = json_document("serve");
        if (!m_state.has_queue()) {
            job["error"] = "this server shows no queue";
        } else {
            try {
                const auto id = parse_number<std::int64_t>(request.matches[1].str());
                job = job_answer(id.value_or(0)).second;
            } catch (const std::exception& error) {
                job["error"] = error.what(); // the store away, or gone
            }
        }
        state += ", \"job\": " + format_json(job);
    } else {
        state += ", \"queue\": " + or_null(snapshot.queue);
        state += ", \"timeline\": " + m_state.timeline_document(k_first_timeline_hours);
    }
    return page_with_state(k_index_html, state + "}");
}

} // namespace gpusched::web
