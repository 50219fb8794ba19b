#include "job_end_report.hpp"

#include <gpusched/job.hpp>
#include <gpusched/job_messages.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace gpusched::cli {

bool report_job_end(const queue::JobRecord& job)
{
    const auto runtime = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(job.runtime));
    const JobOutcome outcome{job.exit_code, job.signal};
    const auto command = shorten_command(job.command);
    switch (job.state) {
    case queue::JobState::succeeded:
        spdlog::info("job {} finished on GPU {}: {} after {}: {}", job.id, job.gpu,
                     describe_outcome(outcome), format_duration(runtime), command);
        return true;
    case queue::JobState::failed:
        spdlog::error("job {} failed on GPU {}: {} after {}: {}", job.id, job.gpu,
                      describe_outcome(outcome), format_duration(runtime), command);
        return false;
    case queue::JobState::cancelled:
    case queue::JobState::skipped:
        spdlog::warn("job {} {}: {}", job.id, queue::describe_end(job.state, job.note), command);
        return false;
    default:
        spdlog::error("job {} refused by its worker: {}: {}", job.id, job.note, command);
        return false;
    }
}

bool report_job_end(const queue::EndedJob& ended)
{
    if (ended.host.empty()) {
        return report_job_end(ended.record);
    }
    const auto& job = ended.record;
    const auto runtime = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(job.runtime));
    const JobOutcome outcome{job.exit_code, job.signal};
    const auto where = fmt::format("{} GPU {}", ended.host, job.gpu);
    const auto command = shorten_command(job.command);
    // The job's place in this submission, and its id in the queue (and in workers' logs).
    const auto name = fmt::format("{} (queue job {})", ended.number, job.id);
    switch (job.state) {
    case queue::JobState::succeeded:
        spdlog::info("job {} finished on {}: {} after {}: {}", name, where,
                     describe_outcome(outcome), format_duration(runtime), command);
        return true;
    case queue::JobState::refused:
        spdlog::error("job {} refused by worker on {}: {}: {}", name, ended.host, job.note,
                      command);
        return false;
    case queue::JobState::skipped:
    case queue::JobState::cancelled:
        spdlog::warn("job {} {}: {}", name, queue::describe_end(job.state, job.note), command);
        return false;
    default:
        spdlog::warn("job {} failed on {}: {} after {}: {}", name, where,
                     describe_outcome(outcome), format_duration(runtime), command);
        return false;
    }
}

} // namespace gpusched::cli
