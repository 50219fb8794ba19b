// The actions of `gpusched serve`, where decide_web_access let them through: each acts only
// on what the serving user owns (their jobs, their workers, and the pauses of the queue they
// serve).
#include <gpusched/web/web_handlers.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

namespace gpusched::web {
namespace {

// The JSON of an action's outcome: what was done, or why not.
WebAnswer said_answer(int status, const std::string& said)
{
    auto document = json_document("serve");
    document[status == 200 ? "done" : "error"] = said;
    return WebHandlers::json(format_json(document), status);
}

} // namespace

WebAnswer WebHandlers::job_action(const WebRequestParts& request)
{
    const auto id = parse_number<std::int64_t>(request.captured.at(0)).value_or(0);
    const auto& verb = request.captured.at(1);
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    auto [status, said] =
        m_state.with_queue([&](queue::QueueBackend& queue) { return act_on_job(queue, id, verb); });
    return said_answer(status, said);
}

WebAnswer WebHandlers::pause_queue(const WebRequestParts& request)
{
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    const bool pause = request.captured.at(0) == "pause";
    const auto gpu = request.value("gpu");
    m_state.with_queue(
        [&](queue::QueueBackend& queue) { pause ? queue.pause(gpu) : queue.resume(gpu); });
    auto document = json_document("serve");
    document["done"] = fmt::format("{} {}", pause ? "paused" : "resumed",
                                   gpu.empty() ? "the queue" : "GPU " + gpu);
    return json(format_json(document));
}

WebAnswer WebHandlers::stop_worker(const WebRequestParts& request)
{
    if (!m_state.has_queue()) {
        return error(404, "this server shows no queue");
    }
    const auto& worker = request.captured.at(0);
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
    return said_answer(status, said);
}

std::pair<int, std::string> WebHandlers::act_on_job(queue::QueueBackend& queue, std::int64_t id,
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
            // A job in a state it cannot be queued again from is a conflict with that state.
            return {status_for(retried.failure(), 409), retried.message()};
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
