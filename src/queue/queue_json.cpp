#include <gpusched/queue/queue_json.hpp>

#include <gpusched/job_request.hpp>
#include <gpusched/memory_size.hpp>

#include <algorithm>

namespace gpusched::queue {
namespace {

Json text_or_null(const std::string& text)
{
    return text.empty() ? Json(nullptr) : Json(text);
}

} // namespace

Json job_json(const JobRecord& job)
{
    // What did not happen is null: a job cancelled before it ran has no exit status, no
    // runtime and no GPU, where 0 would read as a success that took no time. A job that
    // failed to start (its directory gone) has the status the worker gave it (127), and no
    // runtime.
    const bool ran = job.started != 0;
    const bool ended = ran && job.ended_state();
    const bool has_outcome =
        ended || job.state == JobState::failed || job.state == JobState::succeeded;
    // What a waiting job waits for; the others wait for nothing (a store may remember what
    // an ended job once waited for, another not).
    auto after = Json::array();
    auto after_ok = Json::array();
    for (const auto& dependency :
         job.state == JobState::waiting ? job.after : std::vector<JobDependency>{}) {
        (dependency.ok ? after_ok : after).push_back(dependency.id);
    }
    return {{"id", job.id},
            {"name", text_or_null(job.name)},
            {"state", to_string(job.state)},
            {"command", job.command},
            {"priority", job.priority},
            {"directory", text_or_null(job.directory)},
            {"user", text_or_null(job.submitter.user)},
            {"uid", job.submitter.uid >= 0 ? Json(job.submitter.uid) : Json(nullptr)},
            {"submitted_from", text_or_null(job.submitter.host)},
            {"submitted", json_instant(job.submitted)},
            {"after", std::move(after)},
            {"after_ok", std::move(after_ok)},
            {"worker", text_or_null(job.worker)},
            {"gpus", json_gpu_ids(ran || !job.ended_state() ? job.gpu : "")},
            {"started", json_instant(job.started)},
            {"ended", job.ended_state() ? json_instant(job.ended) : Json(nullptr)},
            {"runtime_seconds", ended ? json_seconds(job.runtime) : Json(nullptr)},
            // What it asked for (submit --mem), in whole MiB rounded up; `--mem auto`: learned.
            {"gpu_memory_asked_mib", job.memory_asked && *job.memory_asked != k_learned_memory
                                         ? Json(mebibytes_rounded_up(*job.memory_asked))
                                         : Json(nullptr)},
            {"gpu_memory_learned", job.memory_asked == k_learned_memory},
            {"gpu_memory_reruns", job.memory_reruns},
            // Whole MiB, rounded up, as the job log's peak=.
            {"gpu_memory_peak_mib",
             job.peak_memory > 0 ? Json(mebibytes_rounded_up(job.peak_memory)) : Json(nullptr)},
            // A job killed by a signal has no exit status of its own.
            {"exit_code", has_outcome && job.signal == 0 ? Json(job.exit_code) : Json(nullptr)},
            {"signal", has_outcome ? json_signal(job.signal) : Json(nullptr)},
            {"note", text_or_null(job.note)},
            {"returned", job.returned ? Json(*job.returned) : Json(nullptr)}};
}

Json worker_json(const WorkerRecord& worker, std::size_t running)
{
    return {{"id", worker.id},
            {"host", text_or_null(worker.host)},
            {"pid", worker.pid > 0 ? Json(worker.pid) : Json(nullptr)},
            {"user", text_or_null(worker.user)},
            {"gpus", json_gpu_ids(worker.gpus)},
            {"since", json_instant(worker.since)},
            {"running", running}};
}

std::size_t jobs_running_on(const QueueListing& listing, const std::string& id)
{
    return static_cast<std::size_t>(
        std::count_if(listing.running.begin(), listing.running.end(),
                      [&](const JobRecord& job) { return job.worker == id; }));
}

void add_listing_json(const QueueListing& listing, const std::string& queue,
                      const std::string& where, std::size_t queued_from, Json& document)
{
    document["queue"] = queue;
    document["where"] = where;
    document["queued"] = listing.queued;
    document["waiting"] = listing.waiting;
    document["succeeded"] = listing.succeeded;
    document["failed"] = listing.failed;
    document["cancelled"] = listing.cancelled;
    document["refused"] = listing.refused;
    document["skipped"] = listing.skipped;
    document["returned"] = listing.returned ? Json(*listing.returned) : Json(nullptr);
    document["paused"] = listing.paused;
    auto& workers = document["workers"] = Json::array();
    for (const auto& worker : listing.workers) {
        workers.push_back(worker_json(worker, jobs_running_on(listing, worker.id)));
    }
    auto& next = document["next"] = Json::array();
    auto position = static_cast<std::int64_t>(queued_from);
    for (const auto& job : listing.first_queued) {
        next.push_back(job_json(job));
        next.back()["position"] = ++position;
    }
    for (const auto& [field, jobs] :
         {std::pair{"waiting_jobs", &listing.first_waiting}, std::pair{"running", &listing.running},
          std::pair{"recent", &listing.recent}}) {
        auto& listed = document[field] = Json::array();
        for (const auto& job : *jobs) {
            listed.push_back(job_json(job));
        }
    }
}

} // namespace gpusched::queue
