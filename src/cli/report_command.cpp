#include "report_command.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/joblog_report.hpp>
#include <gpusched/sys/joblog_file.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpusched::cli {

CLI::App* add_report_command(CLI::App& app, ReportOptions& options)
{
    auto* report = app.add_subcommand(
        "report",
        "Summarise a --joblog: jobs, failures, GPU time lost to them, runtimes, GPU use; --svg "
        "draws a timeline");
    report->add_option("JOBLOG", options.joblog, "The job log to read")
        ->type_name("")
        ->required();
    report->add_flag("--json", options.json,
                     "Print JSON instead of text, naming every failed job (its fields: "
                     "docs/json.md)");
    report->add_option("--svg", options.svg,
                       "Also write a timeline to FILE: a row per GPU, a bar per attempt, each "
                       "job's retries joined to it, the GPU time lost to failures")
        ->type_name("FILE");
    return report;
}

int run_report(const ReportOptions& options)
{
    std::vector<JoblogRecord> records;
    if (!sys::read_joblog(options.joblog, [&records](JoblogRecord record) {
            records.push_back(std::move(record));
        })) {
        throw UsageError(
            fmt::format("cannot read '{}': {}", options.joblog, std::strerror(ENOENT)));
    }
    if (records.empty()) {
        throw UsageError(fmt::format("'{}' records no job", options.joblog));
    }
    const auto summary = summarize_joblog(records);
    fmt::print("{}", options.json ? format_summary_json(summary, options.joblog)
                                  : format_summary(summary));
    if (options.svg) {
        std::ofstream svg(*options.svg, std::ios::trunc);
        svg << render_timeline_svg(records);
        if (!svg.flush()) {
            throw UsageError(
                fmt::format("cannot write '{}': {}", *options.svg, std::strerror(errno)));
        }
    }
    return k_exit_success;
}

} // namespace gpusched::cli
