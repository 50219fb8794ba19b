#pragma once

#include <gpusched/joblog.hpp>
#include <gpusched/resume_state.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <functional>
#include <string>

namespace gpusched::sys {

// The --joblog file: one line per finished attempt, appended with a single write(2) as each
// attempt ends, so a crash of the scheduler loses no finished record and a reader never
// sees half a line. A new (or empty) file starts with the header line.
class JoblogFile {
public:
    explicit JoblogFile(const std::string& path);
    void append(const JoblogRecord& record);

private:
    std::string m_path;
    UniqueFd m_fd;
};

// Calls `visit` with each record of the job log at `path`, in file order; returns false if
// there is no such file. A line that is no record is a usage error naming the file and line.
bool read_joblog(const std::string& path, const std::function<void(JoblogRecord)>& visit);

// Reads an existing job log into `state` for --resume / --resume-failed; a missing file is
// an empty log.
void load_joblog(const std::string& path, ResumeState& state);

} // namespace gpusched::sys
