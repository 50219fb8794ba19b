// The runner's records of each attempt: the job log and the .info files of --output-dir.
// A record that cannot be written concerns its job alone: it is kept and tried again, or
// named and counted, and never stops the run.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

namespace gpusched::sys {

void JobRunner::record_attempt(const RunningJob& job, JobOutcome outcome, AttemptEnd end)
{
    const auto runtime = m_clock.now() - job.started;
    m_busy += runtime;
    ++m_attempts;
    m_gpu_seconds +=
        std::chrono::duration<double>(runtime).count() * static_cast<double>(job.slots.size());
    if (m_options.leases) {
        m_options.leases->note_usage(m_gpu_seconds); // to the holders we wait for, if any
    }
    if (!m_options.joblog && !m_options.output_files) {
        return; // no record is kept: spare the copy of the command on every job's end
    }
    JoblogRecord record{job.id,
                        seconds_since_epoch(job.started_wall),
                        std::chrono::duration<double>(runtime).count(),
                        outcome.exit_code,
                        outcome.signal,
                        job.command,
                        job.gpu,
                        end};
    if (m_options.output_files) {
        if (auto written = m_options.output_files->write_info(record, job.attempt); !written) {
            spdlog::error("job {}: its record is lost: {}", job.id, written.message());
            m_unrecorded_jobs.insert(job.id);
        }
    }
    if (m_options.joblog) {
        retry_unwritten_records(false);
        if (!m_unwritten_records.empty()) {
            m_unwritten_records.push_back(std::move(record)); // keeps the log in order
        } else if (auto appended = m_options.joblog->append(record); !appended) {
            spdlog::error("job {}: cannot record it in the job log, will try again: {}", job.id,
                          appended.message());
            m_unwritten_records.push_back(std::move(record));
        }
    }
}

// Records the job log could not take (a full disk) are kept, in order, and written as soon
// as it takes one again; those still unwritten at the end of the run are named, and the
// exit status counts their jobs as failed, since --resume cannot know they ran.
void JobRunner::retry_unwritten_records(bool last_try)
{
    while (!m_unwritten_records.empty()) {
        auto appended = m_options.joblog->append(m_unwritten_records.front());
        if (!appended && !last_try) {
            return;
        }
        if (!appended) {
            const auto& record = m_unwritten_records.front();
            spdlog::error("job {} is not in the job log: {}: {}", record.seq, appended.message(),
                          shorten_command(record.command));
            m_unrecorded_jobs.insert(record.seq);
        } else {
            spdlog::info("job {}'s record is now in the job log", m_unwritten_records.front().seq);
        }
        m_unwritten_records.pop_front();
    }
}

// The exit status counts each job once: one whose record is lost counts unless it already
// counts as failed (or was interrupted, which --resume runs again anyway).
void JobRunner::count_unrecorded_jobs()
{
    for (const JobId job : m_unrecorded_jobs) {
        if (!m_failed_jobs.contains(job) && !m_interrupted.contains(job)) {
            m_scheduler.on_record_lost();
        }
    }
}

} // namespace gpusched::sys
