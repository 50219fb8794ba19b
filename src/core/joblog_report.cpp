#include <gpusched/joblog_report.hpp>

#include <gpusched/failed_jobs.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

namespace gpusched {
namespace {

// Length of the union of [start, end) intervals, and its longest gap inside [from, to).
struct Coverage {
    double covered = 0;
    double longest_gap = 0;
    double gap_from = 0;
};

Coverage coverage(std::vector<std::pair<double, double>> intervals, double from, double to)
{
    std::sort(intervals.begin(), intervals.end());
    Coverage result;
    double reached = from;
    const auto gap = [&](double start) {
        if (start - reached > result.longest_gap) {
            result.longest_gap = start - reached;
            result.gap_from = reached;
        }
    };
    for (const auto& [start, end] : intervals) {
        if (start > reached) {
            gap(start);
            reached = start;
        }
        if (end > reached) {
            result.covered += end - reached;
            reached = end;
        }
    }
    gap(to);
    return result;
}

// GPU rows in nvidia-smi's order: indices by value, other ids after them by name.
bool gpu_before(const std::string& a, const std::string& b)
{
    const auto is_index = [](const std::string& id) {
        return !id.empty() && id.size() < 10 &&
               id.find_first_not_of("0123456789") == std::string::npos;
    };
    if (is_index(a) != is_index(b)) {
        return is_index(a);
    }
    return is_index(a) ? std::stoul(a) < std::stoul(b) : a < b;
}

} // namespace

std::string attempt_outcome(const JoblogRecord& record)
{
    const auto outcome = describe_outcome(JobOutcome{record.exit_code, record.signal});
    return record.interrupted() ? fmt::format("interrupted ({})", outcome) : outcome;
}

std::string report_seconds(double seconds)
{
    // A clock's duration holds about 292 years; records are checked far below that, but the
    // summary of any records must print.
    if (!(seconds >= 0 && seconds < 1e10)) {
        return fmt::format("{:.6g} s", seconds);
    }
    return format_duration(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds)));
}

std::size_t gpus_held(const JoblogRecord& record)
{
    return std::max<std::size_t>(split(record.gpu, ',').size(), 1);
}

std::string_view gpus_of(const JoblogRecord& record)
{
    return record.gpu.empty() ? std::string_view("-") : std::string_view(record.gpu);
}

JoblogSummary summarize_joblog(const std::vector<JoblogRecord>& records)
{
    JoblogSummary summary;
    if (records.empty()) {
        return summary;
    }
    summary.attempts = records.size();
    summary.first_start = records.front().start;
    summary.last_end = records.front().start + records.front().runtime;
    // By job: its attempts so far, in log order.
    struct JobAttempts {
        std::size_t attempts = 0;
        bool any_succeeded = false;
        double gpu_seconds = 0;
        double first_gpu_seconds = 0; // of its first attempt
        const JoblogRecord* last = nullptr;
    };
    std::map<JobId, JobAttempts> jobs;
    std::vector<std::string> gpu_order;
    std::unordered_map<std::string, std::vector<std::pair<double, double>>> busy;
    for (const auto& record : records) {
        const bool succeeded = record.succeeded() && !record.interrupted();
        const double gpu_seconds = record.runtime * static_cast<double>(gpus_held(record));
        auto& job = jobs[record.seq];
        job.first_gpu_seconds = job.attempts == 0 ? gpu_seconds : job.first_gpu_seconds;
        ++job.attempts;
        job.any_succeeded = job.any_succeeded || succeeded;
        job.gpu_seconds += gpu_seconds;
        job.last = &record;
        summary.gpu_seconds += gpu_seconds;
        if (!succeeded) {
            ++summary.failed_attempts;
            summary.failed_gpu_seconds += gpu_seconds;
            ++summary.failed_attempts_by_outcome[attempt_outcome(record)];
        }
        summary.total_runtime += record.runtime;
        summary.first_start = std::min(summary.first_start, record.start);
        summary.last_end = std::max(summary.last_end, record.start + record.runtime);
        // A job of several GPUs (`0,1`) keeps each of them busy.
        for (const auto gpu : split(gpus_of(record), ',')) {
            auto& intervals = busy[std::string(gpu)];
            if (intervals.empty()) {
                gpu_order.emplace_back(gpu);
            }
            intervals.emplace_back(record.start, record.start + record.runtime);
        }
    }
    summary.jobs = jobs.size();
    for (const auto& [id, job] : jobs) {
        if (job.last->succeeded() && !job.last->interrupted()) {
            ++summary.succeeded;
            continue;
        }
        ++summary.failed;
        summary.failed_jobs.push_back(
            {id, job.attempts, !job.any_succeeded, job.gpu_seconds, *job.last});
        if (!job.any_succeeded) {
            ++summary.jobs_failed_every_attempt;
            summary.never_succeeded_gpu_seconds += job.gpu_seconds;
            summary.never_succeeded_retry_gpu_seconds += job.gpu_seconds - job.first_gpu_seconds;
        }
    }
    std::sort(gpu_order.begin(), gpu_order.end(), gpu_before);
    for (const auto& gpu : gpu_order) {
        const auto& intervals = busy[gpu];
        const auto covered = coverage(intervals, summary.first_start, summary.last_end);
        summary.gpus.push_back(
            {gpu, intervals.size(), covered.covered, covered.longest_gap, covered.gap_from});
    }
    return summary;
}

std::string format_summary(const JoblogSummary& summary, std::size_t failed_jobs_named)
{
    std::string text =
        fmt::format("jobs      {} ({} succeeded, {} failed), {} attempts\n", summary.jobs,
                    summary.succeeded, summary.failed, summary.attempts);
    if (!summary.failed_attempts_by_outcome.empty()) {
        std::string failures;
        for (const auto& [outcome, count] : summary.failed_attempts_by_outcome) {
            failures += fmt::format("{}{}: {}", failures.empty() ? "" : ", ", outcome, count);
        }
        text += fmt::format("failures  {} (failed attempts by outcome)\n", failures);
    }
    const double wall = summary.last_end - summary.first_start;
    text += fmt::format(
        "runtime   total {}, mean {} per attempt, wall {}\n", report_seconds(summary.total_runtime),
        report_seconds(
            summary.attempts ? summary.total_runtime / static_cast<double>(summary.attempts) : 0),
        report_seconds(wall));
    text += fmt::format("GPU time  {}", report_seconds(summary.gpu_seconds));
    if (summary.failed_attempts > 0) {
        text += fmt::format(
            ", {} ({:.1f}%) lost to {} failed {}", report_seconds(summary.failed_gpu_seconds),
            summary.gpu_seconds > 0 ? 100.0 * summary.failed_gpu_seconds / summary.gpu_seconds
                                    : 0.0,
            summary.failed_attempts, summary.failed_attempts == 1 ? "attempt" : "attempts");
    }
    text += "\n";
    if (summary.jobs_failed_every_attempt > 0) {
        text +=
            fmt::format("          {} on {} that failed every attempt, {} of it on {} retries\n",
                        report_seconds(summary.never_succeeded_gpu_seconds),
                        summary.jobs_failed_every_attempt == 1
                            ? std::string("1 job")
                            : fmt::format("{} jobs", summary.jobs_failed_every_attempt),
                        report_seconds(summary.never_succeeded_retry_gpu_seconds),
                        summary.jobs_failed_every_attempt == 1 ? "its" : "their");
    }
    const JoblogSummary::GpuUse* idlest = nullptr;
    for (const auto& gpu : summary.gpus) {
        text += fmt::format("GPU {:<6} busy {:5.1f}% ({} attempts), longest idle gap {}\n", gpu.gpu,
                            wall > 0 ? 100.0 * gpu.busy / wall : 100.0, gpu.attempts,
                            report_seconds(gpu.longest_idle));
        if (idlest == nullptr || gpu.longest_idle > idlest->longest_idle) {
            idlest = &gpu;
        }
    }
    if (idlest != nullptr && idlest->longest_idle > 0) {
        text += fmt::format("longest idle gap: {} on GPU {}, from {} after the first start\n",
                            report_seconds(idlest->longest_idle), idlest->gpu,
                            report_seconds(idlest->idle_from - summary.first_start));
    }
    const auto& failed = summary.failed_jobs;
    for (std::size_t i = 0; i < failed.size() && i < failed_jobs_named; ++i) {
        const auto& job = failed[i];
        text += fmt::format("failed    job {}: {}{} on GPU {}: {}\n", job.job,
                            attempt_outcome(job.last),
                            job.attempts > 1 ? fmt::format(" after {} attempts", job.attempts) : "",
                            gpus_of(job.last), one_line_command(job.last.command));
    }
    if (failed.size() > failed_jobs_named) {
        text += fmt::format("          and {} more failed {} (--json lists every one)\n",
                            failed.size() - failed_jobs_named,
                            failed.size() - failed_jobs_named == 1 ? "job" : "jobs");
    }
    return text;
}

} // namespace gpusched
