#include <gpusched/sys/attempt_records.hpp>

#include <gpusched/job_messages.hpp>

#include <spdlog/spdlog.h>

namespace gpusched::sys {

void AttemptRecords::write(const JoblogRecord& record, unsigned attempt)
{
    if (m_output_files != nullptr) {
        if (auto written = m_output_files->write_info(record, attempt); !written) {
            spdlog::error("job {}: its record is lost: {}", record.seq, written.message());
            m_lost.insert(record.seq);
        }
    }
    if (m_joblog == nullptr) {
        return;
    }
    write_unwritten(false);
    if (!m_unwritten.empty()) {
        m_unwritten.push_back(record); // keeps the log in order
    } else if (auto appended = m_joblog->append(record); !appended) {
        spdlog::error("job {}: cannot record it in the job log, will try again: {}", record.seq,
                      appended.message());
        m_unwritten.push_back(record);
    }
}

const std::set<JobId>& AttemptRecords::finish()
{
    if (m_joblog != nullptr) {
        write_unwritten(true);
    }
    return m_lost;
}

void AttemptRecords::write_unwritten(bool last_try)
{
    while (!m_unwritten.empty()) {
        auto appended = m_joblog->append(m_unwritten.front());
        if (!appended && !last_try) {
            return;
        }
        if (!appended) {
            const auto& record = m_unwritten.front();
            spdlog::error("job {} is not in the job log: {}: {}", record.seq, appended.message(),
                          shorten_command(record.command));
            m_lost.insert(record.seq);
        } else {
            spdlog::info("job {}'s record is now in the job log", m_unwritten.front().seq);
        }
        m_unwritten.pop_front();
    }
}

} // namespace gpusched::sys
