#include <gpusched/joblog_report.hpp>

#include <gpusched/failed_jobs.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/split.hpp>
#include <gpusched/visible_text.hpp>

#include <gpusched/counted.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

namespace gpusched {
namespace {

using Intervals = std::vector<std::pair<double, double>>;

// The union of [start, end) intervals, as sorted intervals that neither touch nor overlap.
Intervals merged(Intervals intervals)
{
    std::sort(intervals.begin(), intervals.end());
    Intervals joined;
    for (const auto& [start, end] : intervals) {
        if (!joined.empty() && start <= joined.back().second) {
            joined.back().second = std::max(joined.back().second, end);
        } else {
            joined.emplace_back(start, end);
        }
    }
    return joined;
}

double length(const Intervals& intervals)
{
    double total = 0;
    for (const auto& [start, end] : intervals) {
        total += end - start;
    }
    return total;
}

// The longest stretch without `busy` (merged) inside the spans of `active` (merged): a GPU's
// idle time counts only while some attempt ran on another, not while nothing ran at all.
struct Gap {
    double length = 0;
    double from = 0;
};
Gap longest_gap(const Intervals& busy, const Intervals& active)
{
    Gap longest;
    std::size_t next_busy = 0;
    for (const auto& [span_start, span_end] : active) {
        double reached = span_start;
        while (next_busy < busy.size() && busy[next_busy].first < span_end) {
            const auto& [start, end] = busy[next_busy];
            if (start > reached && start - reached > longest.length) {
                longest = {start - reached, reached};
            }
            reached = std::max(reached, end);
            if (end > span_end) {
                break; // it reaches into the next span too
            }
            ++next_busy;
        }
        if (span_end - reached > longest.length) {
            longest = {span_end - reached, reached};
        }
    }
    return longest;
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

double busy_share(const JoblogSummary::GpuUse& gpu, const JoblogSummary& summary)
{
    return summary.active_seconds > 0 ? std::min(gpu.busy / summary.active_seconds, 1.0) : 1.0;
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
        // Of the attempts that ran to their end (not cut short by a stop, which is not
        // counted as lost), and of the first of them: what failing cost.
        std::size_t ended_attempts = 0;
        double ended_gpu_seconds = 0;
        double first_ended_gpu_seconds = 0;
        std::uint64_t memory_peak = 0;
        const JoblogRecord* last = nullptr;
    };
    std::map<JobId, JobAttempts> jobs;
    std::vector<std::string> gpu_order;
    std::unordered_map<std::string, Intervals> busy;
    Intervals any_busy;
    for (const auto& record : records) {
        const bool succeeded = record.succeeded() && !record.interrupted();
        const double gpu_seconds = record.runtime * static_cast<double>(gpus_held(record));
        auto& job = jobs[record.seq];
        ++job.attempts;
        if (!record.interrupted()) {
            job.first_ended_gpu_seconds =
                job.ended_attempts == 0 ? gpu_seconds : job.first_ended_gpu_seconds;
            ++job.ended_attempts;
            job.ended_gpu_seconds += gpu_seconds;
        }
        job.any_succeeded = job.any_succeeded || succeeded;
        job.memory_peak = std::max(job.memory_peak, record.peak_memory);
        if (record.peak_memory > summary.memory_peak) {
            summary.memory_peak = record.peak_memory;
            summary.memory_peak_job = record.seq;
        }
        summary.out_of_memory_attempts += record.out_of_memory ? 1 : 0;
        job.gpu_seconds += gpu_seconds;
        job.last = &record;
        summary.gpu_seconds += gpu_seconds;
        // An attempt a stop cut short did not fail: --resume runs its job again, and what
        // it did until then may well be kept (a checkpoint).
        if (record.interrupted()) {
            ++summary.interrupted_attempts;
            summary.interrupted_gpu_seconds += gpu_seconds;
        } else if (!succeeded) {
            ++summary.failed_attempts;
            summary.failed_gpu_seconds += gpu_seconds;
            ++summary.failed_attempts_by_outcome[attempt_outcome(record)];
        }
        any_busy.emplace_back(record.start, record.start + record.runtime);
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
        summary.jobs_with_memory_peak += job.memory_peak > 0 ? 1 : 0;
        if (job.last->interrupted()) {
            ++summary.interrupted;
            continue;
        }
        if (job.last->succeeded()) {
            ++summary.succeeded;
            continue;
        }
        ++summary.failed;
        summary.failed_jobs.push_back(
            {id, job.attempts, !job.any_succeeded, job.gpu_seconds, *job.last});
        if (!job.any_succeeded) {
            ++summary.jobs_failed_every_attempt;
            summary.never_succeeded_gpu_seconds += job.ended_gpu_seconds;
            summary.never_succeeded_retry_gpu_seconds +=
                job.ended_gpu_seconds - job.first_ended_gpu_seconds;
        }
    }
    // Time when no attempt ran at all (between a run and its --resume, or while a live
    // queue waited for commands) is no GPU's idle time.
    const auto active = merged(std::move(any_busy));
    summary.active_seconds = length(active);
    std::sort(gpu_order.begin(), gpu_order.end(), gpu_before);
    for (const auto& gpu : gpu_order) {
        const auto& intervals = busy[gpu];
        const auto held = merged(intervals);
        const auto gap = longest_gap(held, active);
        summary.gpus.push_back({gpu, intervals.size(), length(held), gap.length, gap.from});
    }
    return summary;
}

std::string format_summary(const JoblogSummary& summary, std::size_t failed_jobs_named)
{
    std::string text = fmt::format(
        "jobs      {} ({} succeeded, {} failed{}), {}\n", summary.jobs, summary.succeeded,
        summary.failed,
        summary.interrupted > 0 ? fmt::format(", {} interrupted", summary.interrupted) : "",
        counted(summary.attempts, "attempt"));
    if (!summary.failed_attempts_by_outcome.empty()) {
        std::string failures;
        for (const auto& [outcome, count] : summary.failed_attempts_by_outcome) {
            failures += fmt::format("{}{}: {}", failures.empty() ? "" : ", ", outcome, count);
        }
        text += fmt::format("failures  {} (failed attempts by outcome)\n", failures);
    }
    const double wall = summary.last_end - summary.first_start;
    const double paused = wall - summary.active_seconds;
    text += fmt::format(
        "runtime   total {}, mean {} per attempt, wall {}{}\n",
        report_seconds(summary.total_runtime),
        report_seconds(
            summary.attempts ? summary.total_runtime / static_cast<double>(summary.attempts) : 0),
        report_seconds(wall),
        paused > 0.001 ? fmt::format(" ({} of it with no job running)", report_seconds(paused))
                       : "");
    text += fmt::format("GPU time  {}", report_seconds(summary.gpu_seconds));
    if (summary.failed_attempts > 0) {
        text += fmt::format(", {} ({:.1f}%) lost to {}", report_seconds(summary.failed_gpu_seconds),
                            summary.gpu_seconds > 0
                                ? 100.0 * summary.failed_gpu_seconds / summary.gpu_seconds
                                : 0.0,
                            counted(summary.failed_attempts, "failed attempt"));
    }
    if (summary.interrupted_attempts > 0) {
        text +=
            fmt::format(", {} on {} interrupted", report_seconds(summary.interrupted_gpu_seconds),
                        counted(summary.interrupted_attempts, "attempt"));
    }
    text += "\n";
    if (summary.jobs_failed_every_attempt > 0) {
        text += fmt::format("          {} on {} that failed every attempt",
                            report_seconds(summary.never_succeeded_gpu_seconds),
                            counted(summary.jobs_failed_every_attempt, "job"));
        // Retries there were none of (no --retries) are not mentioned.
        if (summary.never_succeeded_retry_gpu_seconds > 0) {
            text += fmt::format(", {} of it on {} retries",
                                report_seconds(summary.never_succeeded_retry_gpu_seconds),
                                summary.jobs_failed_every_attempt == 1 ? "its" : "their");
        }
        text += "\n";
    }
    if (summary.memory_peak > 0 || summary.out_of_memory_attempts > 0) {
        text += "GPU memory";
        if (summary.memory_peak > 0) {
            text += fmt::format(" peak {} (job {}), recorded for {}",
                                format_memory_size(summary.memory_peak), summary.memory_peak_job,
                                counted(summary.jobs_with_memory_peak, "job"));
        }
        if (summary.out_of_memory_attempts > 0) {
            text += fmt::format("{} {} ran out of it", summary.memory_peak > 0 ? ";" : "",
                                counted(summary.out_of_memory_attempts, "attempt"));
        }
        text += "\n";
    }
    const JoblogSummary::GpuUse* idlest = nullptr;
    for (const auto& gpu : summary.gpus) {
        text += fmt::format("GPU {:<6} busy {:5.1f}% ({}), longest idle gap {}\n", gpu.gpu,
                            busy_share(gpu, summary) * 100.0, counted(gpu.attempts, "attempt"),
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
                            gpus_of(job.last), visible_text(one_line_command(job.last.command)));
    }
    if (failed.size() > failed_jobs_named) {
        text += fmt::format("          and {} (--json lists every one)\n",
                            counted(failed.size() - failed_jobs_named, "more failed job"));
    }
    return text;
}

} // namespace gpusched
