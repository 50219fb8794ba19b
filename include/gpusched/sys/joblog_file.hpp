#pragma once

#include <gpusched/result.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <functional>
#include <optional>
#include <string>

namespace gpusched::sys {

// The --joblog file: one line per finished attempt, appended with a single write(2) as each
// attempt ends, so a crash of the scheduler loses no finished record and a reader never
// sees half a line. A new (or empty) file starts with the header line of GNU parallel's
// layout; an existing one gets records in the layout its header names.
class JoblogFile {
public:
    // Opens (or creates) the log; a file that does not start like a job log is refused.
    explicit JoblogFile(const std::string& path);

    // A run takes the log for itself (an open file description lock, shared with the guard
    // that outlives a killed scheduler), so that a second run on the same log, --resume
    // above all, reads it only once every job of the first has ended. Waits, without
    // polling, while another run holds it; returns the stop signal that ended the wait, if
    // one did (`signals` must carry SIGCHLD, SIGINT, SIGTERM and SIGHUP).
    std::optional<int> lock(SignalChannel& signals);
    int fd() const { return m_fd.get(); }

    // Appends one record; on failure (a full disk, say) nothing of it stays in the file and
    // the error, naming the call and the path, is returned.
    Result<void> append(const JoblogRecord& record);

    const std::string& path() const { return m_path; }

private:
    Result<void> write_line(const std::string& line);
    void look_at_end();
    std::string read_first_line() const;

    std::string m_path;
    UniqueFd m_fd;
    JoblogLayout m_layout = JoblogLayout::parallel;
    bool m_needs_header = false;
    bool m_needs_newline = false; // the file ends with a torn line
};

// Calls `visit` with each record of the job log at `path`, in file order; returns false if
// there is no such file. A record torn by a full disk or a power cut is skipped with a
// warning naming the line (its job runs again); a line that is no record at all is a usage
// error naming the file and line, as the file is then probably no job log.
bool read_joblog(const std::string& path, const std::function<void(JoblogRecord)>& visit);

} // namespace gpusched::sys
