#pragma once

#include <CLI/App.hpp>

#include <optional>
#include <string>

namespace gpusched::cli {

struct ReportOptions {
    std::string joblog;
    bool json = false;
    std::optional<std::string> svg;
};

// `gpusched report JOBLOG [--json] [--svg FILE]`: a text summary of a job log, and a timeline.
CLI::App* add_report_command(CLI::App& app, ReportOptions& options);
int run_report(const ReportOptions& options);

} // namespace gpusched::cli
