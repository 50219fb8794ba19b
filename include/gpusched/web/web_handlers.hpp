#pragma once

#include <gpusched/json_output.hpp>
#include <gpusched/result.hpp>
#include <gpusched/time_source.hpp>
#include <gpusched/web_access.hpp>
#include <gpusched/web/live_state.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched::web {

// One request's answer as a handler makes it: WebServer copies it into the HTTP library's.
struct WebAnswer {
    int status = 200;
    std::string content_type{};
    std::string body{};
    std::vector<std::pair<std::string, std::string>> headers{};
};

// What a handler reads of a request: what its route's pattern captured of the path, in
// order, and the values of its query (the first of each name).
struct WebRequestParts {
    std::vector<std::string> captured{};
    std::map<std::string, std::string, std::less<>> query{};

    bool has(std::string_view name) const { return query.find(name) != query.end(); }
    // "" when absent.
    std::string value(std::string_view name) const;
};

// The HTTP status for a failure a request met, from its kind (FailureKind), never its text:
// 404 where what it names is not there, `bad_request` (400, or 409 where the request
// conflicts with a job's state) where the request itself is wrong, 403 refused, 503 a store
// out of reach, 500 anything else. The one place that tells them apart.
int status_for(const Failure& failure, int bad_request = 400);

// The work of each route of `gpusched serve` (docs/serve.md), from what a request says to
// its answer, with no HTTP library in between; WebServer binds the paths to these. Whether
// a request may be answered at all is decide_web_access's, before any of them.
class WebHandlers {
public:
    // `time`: the clock the timeline reads, injected for tests.
    WebHandlers(LiveState& state, const TimeSource& time);

    // The headers every answer carries, refusals and errors too.
    static const std::vector<std::pair<std::string, std::string>>& every_answers_headers();
    // The answer to a request decide_web_access refused; nothing where it allowed it.
    static std::optional<WebAnswer> refusal(const WebDecision& decision);
    // A failure no handler foresaw, thrown: the queue's store away (Redis stopped, the
    // database locked) fails the one request.
    static WebAnswer thrown(const std::exception_ptr& thrown);
    // An error of the HTTP layer (no route for `path`, a request that could not be read), in
    // the API's words.
    static WebAnswer unrouted(int status, std::string_view path);
    // A JSON document as an answer, and the document that says why not.
    static WebAnswer json(std::string body, int status = 200);
    static WebAnswer error(int status, const std::string& why);

    // The page (web_pages.cpp): / without `job`, /jobs/ID with it (the captured ID). With
    // `with_data` (page_may_hold_data), the server's last look is written in, so that its
    // first paint shows it.
    WebAnswer page(bool with_data, const std::optional<std::string>& job);
    // The page's files.
    static WebAnswer app_js();
    static WebAnswer style_css();
    static WebAnswer icon_svg();

    // The API's reads (web_handlers.cpp).
    WebAnswer status();
    WebAnswer queue(const WebRequestParts& request);      // ?from= and ?count=
    WebAnswer job(const WebRequestParts& request);        // the captured ID
    WebAnswer job_output(const WebRequestParts& request); // ID; ?stream=, ?from=
    WebAnswer timeline(const WebRequestParts& request);   // ?hours=

    // The actions (web_action_handlers.cpp), each on what the serving user owns only: their
    // jobs, their workers, and the pauses of the queue they serve.
    WebAnswer job_action(const WebRequestParts& request);  // ID, then cancel or retry
    WebAnswer pause_queue(const WebRequestParts& request); // pause or resume; ?gpu=
    WebAnswer stop_worker(const WebRequestParts& request); // the worker's id

private:
    // /api/jobs/ID's answer: its HTTP status and document (the job, or why not).
    std::pair<int, Json> job_answer(std::int64_t id);
    // Cancels or retries job `id`, where it is the serving user's: the HTTP status and what
    // was done, or why not.
    std::pair<int, std::string> act_on_job(queue::QueueBackend& queue, std::int64_t id,
                                           const std::string& verb) const;

    LiveState& m_state;
    const TimeSource& m_time;
};

} // namespace gpusched::web
