#pragma once

#include <gpusched/joblog.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpusched {

// What `gpusched report` says about a job log.
struct JoblogSummary {
    struct GpuUse {
        std::string gpu;
        std::size_t attempts = 0;
        double busy = 0;         // seconds with at least one attempt running
        double longest_idle = 0; // seconds, while an attempt ran on some GPU
        double idle_from = 0;    // epoch seconds where that gap starts
    };

    // A job whose last attempt failed (not one a stop interrupted: --resume runs it again).
    struct FailedJob {
        JobId job = 0;
        std::size_t attempts = 0;
        bool every_attempt_failed = false; // else an earlier attempt succeeded
        double gpu_seconds = 0;            // of all its attempts
        JoblogRecord last;                 // its last attempt
    };

    std::size_t jobs = 0;
    std::size_t succeeded = 0;   // jobs whose last attempt succeeded
    std::size_t failed = 0;      // jobs whose last attempt failed
    std::size_t interrupted = 0; // jobs whose last attempt a stop of the run cut short
    std::size_t attempts = 0;
    std::size_t failed_attempts = 0; // attempts that failed by themselves or by --timeout
    std::size_t interrupted_attempts = 0;
    std::map<std::string, std::size_t> failed_attempts_by_outcome; // "exit 1", "SIGTERM"
    double total_runtime = 0;
    double first_start = 0;
    double last_end = 0;
    // Within last_end - first_start, the time some attempt ran: the rest passed with no job
    // running (between a run and its --resume, say), which counts as no GPU's idle time.
    double active_seconds = 0;
    // GPU time: an attempt's runtime times the GPUs it held (a job on `0,1` holds two).
    double gpu_seconds = 0;
    double failed_gpu_seconds = 0; // on failed attempts, retried or not
    double interrupted_gpu_seconds = 0;
    // On the jobs that failed every attempt, and on those jobs' retries (their attempts
    // after the first): the time a retry policy spent for nothing.
    std::size_t jobs_failed_every_attempt = 0;
    double never_succeeded_gpu_seconds = 0;
    double never_succeeded_retry_gpu_seconds = 0;
    // GPU memory, where it was watched (--mem): the highest peak of any attempt and its job,
    // the jobs with a peak recorded, and the attempts that ran out of GPU memory.
    std::uint64_t memory_peak = 0;
    JobId memory_peak_job = 0;
    std::size_t jobs_with_memory_peak = 0;
    std::size_t out_of_memory_attempts = 0;
    std::vector<GpuUse> gpus;           // indices in numeric order, then other ids by name
    std::vector<FailedJob> failed_jobs; // by job number
};

JoblogSummary summarize_joblog(const std::vector<JoblogRecord>& records);
// The text `gpusched report` prints; it names at most `failed_jobs_named` failed jobs.
std::string format_summary(const JoblogSummary& summary, std::size_t failed_jobs_named = 10);
// The same as JSON (docs/json.md), naming every failed job.
std::string format_summary_json(const JoblogSummary& summary, const std::string& joblog);

// An SVG timeline: one row per GPU, one bar per attempt from its start to its end, coloured
// by outcome, with the job, outcome and command in the bar's tooltip. The attempts of a job
// are grouped, and joined by a line from each to its retry; the heading names the GPU time
// lost to failed attempts. It takes the width of its container.
std::string render_timeline_svg(const std::vector<JoblogRecord>& records);

// Shared by the text, the JSON and the timeline.
// "exit 3", "killed by SIGTERM", "interrupted (killed by SIGINT)".
std::string attempt_outcome(const JoblogRecord& record);
// Seconds as a duration ("1.520 s", "2 min 03 s"); any double prints.
std::string report_seconds(double seconds);
// The number of GPUs an attempt held: its GPU ids are comma-separated.
std::size_t gpus_held(const JoblogRecord& record);
// A GPU's busy time over the time some attempt ran (from 0 to 1).
double busy_share(const JoblogSummary::GpuUse& gpu, const JoblogSummary& summary);
// The GPUs an attempt ran on ("0", "0,1"), or "-" for one GNU parallel ran, which its log
// does not say.
std::string_view gpus_of(const JoblogRecord& record);

} // namespace gpusched
