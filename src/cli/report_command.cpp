#include "report_command.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/joblog_report.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpusched::cli {

CLI::App* add_report_command(CLI::App& app, ReportOptions& options)
{
    auto* report = app.add_subcommand(
        "report", "Summarise a --joblog: jobs, failures, runtimes, GPU use; --svg draws a timeline");
    report->add_option("JOBLOG", options.joblog, "The job log to read")->required();
    report->add_option("--svg", options.svg,
                       "Also write a timeline to FILE: a row per GPU, a bar per attempt");
    return report;
}

int run_report(const ReportOptions& options)
{
    std::ifstream file(options.joblog, std::ios::binary);
    if (!file) {
        throw UsageError(fmt::format("cannot read '{}': {}", options.joblog, std::strerror(errno)));
    }
    std::vector<JoblogRecord> records;
    std::string line;
    for (std::size_t number = 1; std::getline(file, line); ++number) {
        if (line.empty() || is_joblog_header(line)) {
            continue;
        }
        auto record = parse_joblog_line(line);
        if (auto* error = std::get_if<ParseError>(&record)) {
            throw UsageError(fmt::format("{}:{}: not a job log record: {}", options.joblog, number,
                                         error->message));
        }
        records.push_back(std::move(std::get<JoblogRecord>(record)));
    }
    if (records.empty()) {
        throw UsageError(fmt::format("'{}' records no job", options.joblog));
    }
    fmt::print("{}", format_summary(summarize_joblog(records)));
    if (options.svg) {
        std::ofstream svg(*options.svg, std::ios::trunc);
        svg << render_timeline_svg(records);
        if (!svg.flush()) {
            throw UsageError(fmt::format("cannot write '{}': {}", *options.svg, std::strerror(errno)));
        }
    }
    return k_exit_success;
}

} // namespace gpusched::cli
