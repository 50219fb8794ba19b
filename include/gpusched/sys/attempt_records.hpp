#pragma once

#include <gpusched/job.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/sys/joblog_file.hpp>
#include <gpusched/sys/output_files.hpp>

#include <deque>
#include <set>

namespace gpusched::sys {

// The records of each attempt: its line in the job log (--joblog) and its .info file
// (--output-dir). A record that cannot be written concerns its job alone, and never stops the
// run: a line the job log refuses (a full disk) is kept and written, in order, as soon as the
// log takes one again; a lost .info file, and the lines still unwritten at the end, are named,
// and their jobs counted apart, since --resume cannot know they ran.
class AttemptRecords {
public:
    // Either may be null: no such record is kept. Both must outlive this.
    AttemptRecords(JoblogFile* joblog, const OutputFiles* output_files)
        : m_joblog(joblog), m_output_files(output_files)
    {
    }

    // False when no record is kept: the caller spares itself making them.
    bool keeps_any() const { return m_joblog != nullptr || m_output_files != nullptr; }
    void write(const JoblogRecord& record, unsigned attempt);
    // True while a record of `job` is lost, or may be (a line is still unwritten).
    bool may_be_lost(JobId job) const { return m_lost.contains(job) || !m_unwritten.empty(); }
    std::size_t unwritten() const { return m_unwritten.size(); }

    // The end of the run: a last try for the lines still unwritten. Returns the jobs a record
    // of which is lost.
    const std::set<JobId>& finish();

private:
    // Writes the kept lines, in order, until the log refuses one; on the last try, a refused
    // line is named and its job's record counted lost.
    void write_unwritten(bool last_try);

    JoblogFile* m_joblog;
    const OutputFiles* m_output_files;
    std::deque<JoblogRecord> m_unwritten; // the job log refused them so far
    std::set<JobId> m_lost;
};

} // namespace gpusched::sys
