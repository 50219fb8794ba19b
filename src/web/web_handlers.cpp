// The API's reads of `gpusched serve`, and the answers every route shares: refusals, errors
// and what was thrown.
#include <gpusched/web/web_handlers.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/queue/queue_json.hpp>

#include <fmt/format.h>

#include <exception>

namespace gpusched::web {
namespace {

constexpr std::size_t k_most_jobs_a_page = 500;
constexpr std::uint64_t k_output_tail = 64 * 1024;
constexpr std::uint64_t k_most_output = 256 * 1024;
constexpr const char* k_json = "application/json";

// A number parameter, `fallback` when absent; nothing when it is there and no number.
std::optional<std::size_t> size_param(const WebRequestParts& request, std::string_view name,
                                      std::size_t fallback)
{
    if (!request.has(name)) {
        return fallback;
    }
    return parse_number<std::size_t>(request.value(name));
}

std::optional<std::int64_t> job_id(const WebRequestParts& request)
{
    return parse_number<std::int64_t>(request.captured.at(0));
}

} // namespace

std::string WebRequestParts::value(std::string_view name) const
{
    const auto found = query.find(name);
    return found == query.end() ? std::string() : found->second;
}

int status_for(const Failure& failure, int bad_request)
{
    // Decided by the failure's kind: its text is for people.
    switch (failure.kind) {
    case FailureKind::not_found:
        return 404;
    case FailureKind::bad_request:
        return bad_request;
    case FailureKind::refused:
        return 403;
    case FailureKind::unreachable:
        return 503;
    case FailureKind::other:
        break;
    }
    return 500;
}

WebHandlers::WebHandlers(LiveState& state, const TimeSource& time) : m_state(state), m_time(time) {}

const std::vector<std::pair<std::string, std::string>>& WebHandlers::every_answers_headers()
{
    // Nothing here may be framed by another site, and nothing guessed from its bytes; no
    // address of this server's reaches another in a Referer. No CORS header is ever
    // answered: no other origin's script reads an answer or sends the bearer token.
    static const std::vector<std::pair<std::string, std::string>> headers = {
        {"X-Frame-Options", "DENY"},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "no-referrer"}};
    return headers;
}

std::optional<WebAnswer> WebHandlers::refusal(const WebDecision& decision)
{
    if (decision.allowed()) {
        return std::nullopt;
    }
    return error(decision.status, decision.why);
}

WebAnswer WebHandlers::thrown(const std::exception_ptr& thrown)
{
    try {
        std::rethrow_exception(thrown);
    } catch (const std::exception& failure) {
        return error(503, failure.what());
    } catch (...) {
        return error(500, "an unknown error");
    }
}

WebAnswer WebHandlers::unrouted(int status, std::string_view path)
{
    return error(status, status == 404 ? fmt::format("nothing here at {}", path)
                                       : "the request could not be read");
}

WebAnswer WebHandlers::json(std::string body, int status)
{
    return {.status = status, .content_type = k_json, .body = std::move(body)};
}

WebAnswer WebHandlers::error(int status, const std::string& why)
{
    auto document = json_document("serve");
    document["error"] = why;
    return json(format_json(document), status);
}

WebAnswer WebHandlers::status()
{
    return json(m_state.current().status);
}

WebAnswer WebHandlers::queue(const WebRequestParts& request)
{
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    const auto from = size_param(request, "from", 0);
    const auto count = size_param(request, "count", LiveState::k_queue_page);
    if (!from || !count || *count > k_most_jobs_a_page) {
        return error(400, fmt::format("from and count are whole numbers, count at most {}",
                                      k_most_jobs_a_page));
    }
    if (*from == 0 && *count == LiveState::k_queue_page) {
        return json(m_state.current().queue);
    }
    auto document = json_document("serve");
    const auto& name = m_state.sources().queue_name;
    m_state.with_queue([&](queue::QueueBackend& backend) {
        const auto listing = backend.list(
            {.queued = *count, .queued_from = *from, .recent = LiveState::k_queue_page});
        queue::add_listing_json(listing, name, backend.describe(), *from, document);
    });
    document["error"] = nullptr;
    return json(format_json(document));
}

WebAnswer WebHandlers::job(const WebRequestParts& request)
{
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    auto [status, document] = job_answer(job_id(request).value_or(0));
    return json(format_json(document), status);
}

WebAnswer WebHandlers::job_output(const WebRequestParts& request)
{
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    const auto stream = request.value("stream");
    if (stream != "stdout" && stream != "stderr") {
        return error(400, "stream is stdout or stderr");
    }
    const bool out = stream == "stdout";
    const auto id = job_id(request);
    auto document = json_document("serve");
    std::optional<Failure> problem;
    m_state.with_queue([&](queue::QueueBackend& backend) {
        const auto jobs = backend.jobs({id.value_or(0)});
        if (jobs.empty()) {
            problem = Failure(FailureKind::not_found, fmt::format("no job {} in this queue", *id));
            return;
        }
        const auto sizes = backend.output_sizes(jobs.front());
        const auto size = out ? sizes.out : sizes.err;
        // Without ?from=, the tail: a page that follows a job asks on from there.
        auto from =
            request.has("from")
                ? parse_number<std::uint64_t>(request.value("from"))
                : std::optional<std::uint64_t>(size > k_output_tail ? size - k_output_tail : 0);
        if (!from) {
            problem = Failure(FailureKind::bad_request, "from is a byte offset");
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
        return error(status_for(*problem), problem->message);
    }
    return json(format_json(document));
}

WebAnswer WebHandlers::timeline(const WebRequestParts& request)
{
    const auto hours = size_param(request, "hours", 6);
    if (!hours || *hours == 0 || *hours > 24) {
        return error(400, "hours is a whole number from 1 to 24");
    }
    return json(m_state.timeline_document(static_cast<unsigned>(*hours), m_time));
}

std::pair<int, Json> WebHandlers::job_answer(std::int64_t id)
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

} // namespace gpusched::web
