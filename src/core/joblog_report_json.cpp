// `gpusched report --json`: the summary for scripts, in the vocabulary of every `--json`
// (docs/json.md).
#include <gpusched/joblog_report.hpp>
#include <gpusched/json_output.hpp>

#include <algorithm>
#include <cmath>

namespace gpusched {
namespace {

Json last_attempt_json(const JoblogRecord& last)
{
    return {
        {"outcome", attempt_outcome(last)},
        // A job killed by a signal has no exit status of its own.
        {"exit_code", last.signal == 0 ? Json(last.exit_code) : Json(nullptr)},
        {"signal", json_signal(last.signal)},
        {"stopped", attempt_end_word(last.end)},
        {"gpus", json_gpu_ids(last.gpu)},
        {"started", json_instant(last.start)},
        {"runtime_seconds", json_seconds(last.runtime)},
        {"gpu_memory_peak_bytes", last.peak_memory > 0 ? Json(last.peak_memory) : Json(nullptr)},
        {"out_of_gpu_memory", last.out_of_memory}};
}

} // namespace

std::string format_summary_json(const JoblogSummary& summary, const std::string& joblog)
{
    const double wall = summary.last_end - summary.first_start;
    Json gpus = Json::array();
    for (const auto& gpu : summary.gpus) {
        gpus.push_back({{"id", gpu.gpu},
                        {"attempts", gpu.attempts},
                        {"busy_seconds", json_seconds(gpu.busy)},
                        {"busy_share", std::round(busy_share(gpu, summary) * 10000) / 10000},
                        {"longest_idle_seconds", json_seconds(gpu.longest_idle)},
                        // A GPU never idle within the log's span has no such stretch.
                        {"longest_idle_from_seconds",
                         gpu.longest_idle > 0 ? json_seconds(gpu.idle_from - summary.first_start)
                                              : Json(nullptr)}});
    }
    Json failed_jobs = Json::array();
    for (const auto& job : summary.failed_jobs) {
        failed_jobs.push_back({{"id", job.job},
                               {"command", job.last.command},
                               {"attempts", job.attempts},
                               {"every_attempt_failed", job.every_attempt_failed},
                               {"gpu_seconds", json_seconds(job.gpu_seconds)},
                               {"last_attempt", last_attempt_json(job.last)}});
    }
    auto report = json_document("report");
    report["joblog"] = joblog;
    report["jobs"] = {{"total", summary.jobs},
                      {"succeeded", summary.succeeded},
                      {"failed", summary.failed},
                      {"interrupted", summary.interrupted},
                      {"failed_every_attempt", summary.jobs_failed_every_attempt}};
    report["attempts"] = {{"total", summary.attempts},
                          {"failed", summary.failed_attempts},
                          {"interrupted", summary.interrupted_attempts},
                          {"failed_by_outcome", summary.failed_attempts_by_outcome}};
    report["time"] = {
        {"first_started", json_instant(summary.first_start)},
        {"last_ended", json_instant(summary.last_end)},
        {"wall_seconds", json_seconds(wall)},
        {"no_job_running_seconds", json_seconds(std::max(wall - summary.active_seconds, 0.0))},
        {"runtime_seconds", json_seconds(summary.total_runtime)},
        {"mean_runtime_seconds",
         summary.attempts > 0
             ? json_seconds(summary.total_runtime / static_cast<double>(summary.attempts))
             : Json(nullptr)}};
    report["gpu_time"] = {
        {"total_seconds", json_seconds(summary.gpu_seconds)},
        {"failed_attempts_seconds", json_seconds(summary.failed_gpu_seconds)},
        {"interrupted_attempts_seconds", json_seconds(summary.interrupted_gpu_seconds)},
        {"jobs_failed_every_attempt_seconds", json_seconds(summary.never_succeeded_gpu_seconds)},
        {"retries_of_jobs_failed_every_attempt_seconds",
         json_seconds(summary.never_succeeded_retry_gpu_seconds)}};
    report["gpu_memory"] = {
        {"peak_bytes", summary.memory_peak > 0 ? Json(summary.memory_peak) : Json(nullptr)},
        {"peak_job", summary.memory_peak > 0 ? Json(summary.memory_peak_job) : Json(nullptr)},
        {"jobs_with_peak", summary.jobs_with_memory_peak},
        {"out_of_memory_attempts", summary.out_of_memory_attempts}};
    report["gpus"] = std::move(gpus);
    report["failed_jobs"] = std::move(failed_jobs);
    return format_json(report);
}

} // namespace gpusched
