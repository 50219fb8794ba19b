#pragma once

#include <gpusched/errors.hpp>
#include <gpusched/scheduler.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// How an attempt came to its end: by itself, stopped by --timeout, or stopped by a stop of
// the whole run (a signal to gpusched, `--halt now`). An interrupted attempt never makes
// --resume skip its job: it did not get to finish.
enum class AttemptEnd { by_itself, timeout, interrupted };

// One finished attempt, as a line of the job log. The columns are GNU parallel's (Seq, Host,
// Starttime, JobRuntime, Send, Receive, Exitval, Signal, Command), so its users' scripts keep
// working, then GPU and Stopped. GPU ids and Stopped's words hold no tab, so a command with
// tabs still parses. Logs written before the Stopped column existed still read: their lines
// end with the GPU.
struct JoblogRecord {
    JobId seq = 0;
    double start = 0;   // seconds since the epoch
    double runtime = 0; // seconds
    int exit_code = 0;
    int signal = 0;
    std::string command;
    std::string gpu;
    AttemptEnd end = AttemptEnd::by_itself;

    bool succeeded() const { return exit_code == 0 && signal == 0; }
    bool interrupted() const { return end == AttemptEnd::interrupted; }
};

std::string joblog_header();
std::string format_joblog_line(const JoblogRecord& record);
// Parses a line without its newline; the header line is an error like any other non-record.
Result<JoblogRecord> parse_joblog_line(std::string_view line);
bool is_joblog_header(std::string_view line);
// True for a line that starts like a record (a sequence number, then a tab or nothing): a
// record torn by a full disk or a power cut, as opposed to a file that is no job log.
bool looks_like_torn_record(std::string_view line);
// The Stopped column's word for `end`: "no", "timeout" or "interrupted".
std::string_view attempt_end_word(AttemptEnd end);
// The end a Stopped word names, if it is one.
std::optional<AttemptEnd> attempt_end_of(std::string_view word);

} // namespace gpusched
