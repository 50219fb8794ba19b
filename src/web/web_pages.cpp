// The page of `gpusched serve` and its files, all built into the binary.
#include <gpusched/web/web_handlers.hpp>

#include "web_assets.hpp"

#include <gpusched/parse_number.hpp>
#include <gpusched/web_page.hpp>

#include <exception>

namespace gpusched::web {
namespace {

// What the page's timeline shows first (its choice of hours says so too).
constexpr unsigned k_first_timeline_hours = 6;

WebAnswer file_answer(std::string_view file, const char* type)
{
    return {.status = 200, .content_type = type, .body = std::string(file)};
}

} // namespace

WebAnswer WebHandlers::page(bool with_data, const std::optional<std::string>& job)
{
    // No cookie is set: a browser would send it to every server on this host, whatever its
    // port. The page's script takes the token from the address (#token=, which no browser
    // sends anywhere, or an older version's ?token=) into this tab's sessionStorage.
    WebAnswer answer{
        .status = 200,
        .content_type = "text/html; charset=utf-8",
        .body = {},
        .headers = {{"Content-Security-Policy",
                     "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"},
                    {"Cache-Control", "no-store"}}};
    if (!with_data) {
        answer.body = std::string(k_index_html);
        return answer;
    }
    // The documents the page's script would ask for first, as their requests answer them.
    const auto snapshot = m_state.current();
    const auto or_null = [](const std::string& document) {
        return document.empty() ? std::string("null") : document;
    };
    std::string state = "{\"status\": " + or_null(snapshot.status);
    if (job) {
        // What /api/jobs/ID would answer, its errors too.
        Json found = json_document("serve");
        if (!m_state.has_queue()) {
            found["error"] = "this server shows no queue";
        } else {
            try {
                const auto id = parse_number<std::int64_t>(*job);
                found = job_answer(id.value_or(0)).second;
            } catch (const std::exception& failure) {
                found["error"] = failure.what(); // the store away, or gone
            }
        }
        state += ", \"job\": " + format_json(found);
    } else {
        state += ", \"queue\": " + or_null(snapshot.queue);
        state += ", \"timeline\": " + m_state.timeline_document(k_first_timeline_hours, m_time);
    }
    answer.body = page_with_state(k_index_html, state + "}");
    return answer;
}

WebAnswer WebHandlers::app_js()
{
    return file_answer(k_app_js, "text/javascript; charset=utf-8");
}

WebAnswer WebHandlers::style_css()
{
    return file_answer(k_style_css, "text/css; charset=utf-8");
}

// The page names its icon; /favicon.ico is where a browser looks for one of a document that
// names none (an answer of the API opened in a tab).
WebAnswer WebHandlers::icon_svg()
{
    return file_answer(k_icon_svg, "image/svg+xml");
}

} // namespace gpusched::web
