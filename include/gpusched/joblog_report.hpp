#pragma once

#include <gpusched/joblog.hpp>

#include <cstddef>
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
        double longest_idle = 0; // seconds, within the log's span
        double idle_from = 0;    // epoch seconds where that gap starts
    };

    std::size_t jobs = 0;
    std::size_t succeeded = 0; // jobs whose last attempt succeeded
    std::size_t failed = 0;
    std::size_t attempts = 0;
    std::map<std::string, std::size_t> failed_attempts_by_outcome; // "exit 1", "SIGTERM"
    double total_runtime = 0;
    double first_start = 0;
    double last_end = 0;
    std::vector<GpuUse> gpus; // indices in numeric order, then other ids by name
};

JoblogSummary summarize_joblog(const std::vector<JoblogRecord>& records);
std::string format_summary(const JoblogSummary& summary);

// An SVG timeline: one row per GPU, one bar per attempt from its start to its end, coloured
// by outcome, with the job, outcome and command in the bar's tooltip.
std::string render_timeline_svg(const std::vector<JoblogRecord>& records);

} // namespace gpusched
