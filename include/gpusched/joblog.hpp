#pragma once

#include <gpusched/errors.hpp>
#include <gpusched/scheduler.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// How an attempt came to its end: by itself, stopped by --timeout, or stopped by a stop of
// the whole run (a signal to gpusched, `--halt now`). An interrupted attempt never makes
// --resume skip its job: it did not get to finish.
enum class AttemptEnd { by_itself, timeout, interrupted };

// One finished attempt, as a line of the job log.
struct JoblogRecord {
    JobId seq = 0;
    double start = 0;   // seconds since the epoch
    double runtime = 0; // seconds
    int exit_code = 0;
    int signal = 0;
    std::string command;
    std::string gpu; // empty in a record GNU parallel wrote
    AttemptEnd end = AttemptEnd::by_itself;
    // The most GPU memory its processes were seen to use on one of its GPUs, in bytes (0: not
    // seen, as without --mem), and whether it died of running out of GPU memory.
    std::uint64_t peak_memory = 0;
    bool out_of_memory = false;

    // An attempt --timeout stopped never succeeded, whatever it returned; one a stop
    // interrupted is told apart with interrupted().
    bool succeeded() const { return exit_code == 0 && signal == 0 && end != AttemptEnd::timeout; }
    bool interrupted() const { return end == AttemptEnd::interrupted; }
};

// The column layouts a job log can have; a file keeps the one its header names.
enum class JoblogLayout {
    // GNU parallel's nine columns (Seq, Host, Starttime, JobRuntime, Send, Receive, Exitval,
    // Signal, Command), the command last, so that parallel's --resume, --resume-failed and
    // --retry-failed read a gpusched log and gpusched reads parallel's. The GPU, and how
    // the attempt was stopped if gpusched stopped it, go in Host ("gpu=0", "gpu=0,1;timeout"),
    // and so do its GPU memory's peak and an out-of-memory ("gpu=0;oom;peak=20480M");
    // an attempt gpusched stopped that exited 0 has Exitval -1, as parallel writes for the
    // jobs it kills, so that parallel's --resume-failed runs it again.
    parallel,
    // The layout of gpusched's logs before they took parallel's: the nine columns with Host
    // ":", then GPU and Stopped ("no", "timeout", "interrupted"; absent in the oldest).
    gpu_after_command,
};

std::string joblog_header(JoblogLayout layout = JoblogLayout::parallel);
// The layout a header line names; nothing for a line that is no header.
std::optional<JoblogLayout> joblog_layout_of_header(std::string_view line);
bool is_joblog_header(std::string_view line);
std::string format_joblog_line(const JoblogRecord& record,
                               JoblogLayout layout = JoblogLayout::parallel);
// Parses a line without its newline; the header line is an error like any other non-record.
Result<JoblogRecord> parse_joblog_line(std::string_view line,
                                       JoblogLayout layout = JoblogLayout::parallel);
// True for a line that starts like a record (a sequence number, then a tab or nothing): a
// record torn by a full disk or a power cut, as opposed to a file that is no job log.
bool looks_like_torn_record(std::string_view line);
// The Stopped column's word for `end`: "no", "timeout" or "interrupted".
std::string_view attempt_end_word(AttemptEnd end);
// The end a Stopped word names, if it is one.
std::optional<AttemptEnd> attempt_end_of(std::string_view word);

} // namespace gpusched
