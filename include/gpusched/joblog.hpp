#pragma once

#include <gpusched/errors.hpp>
#include <gpusched/scheduler.hpp>

#include <string>
#include <string_view>

namespace gpusched {

// One finished attempt, as a line of the job log. The columns are GNU parallel's (Seq, Host,
// Starttime, JobRuntime, Send, Receive, Exitval, Signal, Command), so its users' scripts keep
// working, plus GPU at the end: GPU ids hold no tab, so a command with tabs still parses.
struct JoblogRecord {
    JobId seq = 0;
    double start = 0;   // seconds since the epoch
    double runtime = 0; // seconds
    int exit_code = 0;
    int signal = 0;
    std::string command;
    std::string gpu;

    bool succeeded() const { return exit_code == 0 && signal == 0; }
};

std::string joblog_header();
std::string format_joblog_line(const JoblogRecord& record);
// Parses a line without its newline; the header line is an error like any other non-record.
Parsed<JoblogRecord> parse_joblog_line(std::string_view line);
bool is_joblog_header(std::string_view line);

} // namespace gpusched
