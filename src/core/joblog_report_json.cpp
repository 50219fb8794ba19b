// `gpusched report --json`: the summary for scripts. Its fields are a promise kept across
// versions (docs/report-json.md); a change that breaks one raises k_schema_version.
#include <gpusched/joblog_report.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace gpusched {
namespace {

// 2: interrupted jobs and attempts counted apart from failed ones, and the time with no job
// running left out of busy shares and idle gaps.
constexpr int k_schema_version = 2;

nlohmann::ordered_json signal_name(int signal)
{
    if (signal == 0) {
        return nullptr;
    }
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? nlohmann::ordered_json(fmt::format("SIG{}", name))
                           : nlohmann::ordered_json(nullptr);
}

} // namespace

std::string format_summary_json(const JoblogSummary& summary, const std::string& joblog)
{
    using Json = nlohmann::ordered_json;
    const double wall = summary.last_end - summary.first_start;
    Json gpus = Json::array();
    for (const auto& gpu : summary.gpus) {
        gpus.push_back(
            {{"id", gpu.gpu},
             {"attempts", gpu.attempts},
             {"busy_seconds", gpu.busy},
             {"busy_share", busy_share(gpu, summary)},
             {"longest_idle_seconds", gpu.longest_idle},
             // A GPU never idle within the log's span has no such stretch.
             {"longest_idle_from_seconds",
              gpu.longest_idle > 0 ? Json(gpu.idle_from - summary.first_start) : Json(nullptr)}});
    }
    Json failed_jobs = Json::array();
    for (const auto& job : summary.failed_jobs) {
        const auto& last = job.last;
        failed_jobs.push_back({{"job", job.job},
                               {"attempts", job.attempts},
                               {"every_attempt_failed", job.every_attempt_failed},
                               {"gpu_seconds", job.gpu_seconds},
                               {"command", last.command},
                               {"last_attempt",
                                {{"outcome", attempt_outcome(last)},
                                 {"exit_code", last.exit_code},
                                 {"signal", last.signal},
                                 {"signal_name", signal_name(last.signal)},
                                 {"stopped", attempt_end_word(last.end)},
                                 {"gpu", last.gpu.empty() ? Json(nullptr) : Json(last.gpu)},
                                 {"start", last.start},
                                 {"runtime_seconds", last.runtime}}}});
    }
    const Json report = {
        {"schema_version", k_schema_version},
        {"joblog", joblog},
        {"jobs",
         {{"total", summary.jobs},
          {"succeeded", summary.succeeded},
          {"failed", summary.failed},
          {"interrupted", summary.interrupted},
          {"failed_every_attempt", summary.jobs_failed_every_attempt}}},
        {"attempts",
         {{"total", summary.attempts},
          {"failed", summary.failed_attempts},
          {"interrupted", summary.interrupted_attempts},
          {"failed_by_outcome", summary.failed_attempts_by_outcome}}},
        {"time",
         {{"first_start", summary.first_start},
          {"last_end", summary.last_end},
          {"wall_seconds", wall},
          {"no_job_running_seconds", std::max(wall - summary.active_seconds, 0.0)},
          {"runtime_seconds", summary.total_runtime},
          {"mean_runtime_seconds",
           summary.attempts > 0 ? summary.total_runtime / static_cast<double>(summary.attempts)
                                : 0.0}}},
        {"gpu_time",
         {{"total_seconds", summary.gpu_seconds},
          {"failed_attempts_seconds", summary.failed_gpu_seconds},
          {"interrupted_attempts_seconds", summary.interrupted_gpu_seconds},
          {"jobs_failed_every_attempt_seconds", summary.never_succeeded_gpu_seconds},
          {"retries_of_jobs_failed_every_attempt_seconds",
           summary.never_succeeded_retry_gpu_seconds}}},
        {"gpus", std::move(gpus)},
        {"failed_jobs", std::move(failed_jobs)},
    };
    // A command is bytes: what is not UTF-8 is replaced rather than refused.
    return report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace gpusched
