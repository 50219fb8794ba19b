#include "job_end_report.hpp"

#include <gpusched/job.hpp>
#include <gpusched/job_messages.hpp>

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
        spdlog::warn("job {} cancelled: {}", job.id, command);
        return false;
    default:
        spdlog::error("job {} refused by its worker: {}: {}", job.id, job.note, command);
        return false;
    }
}

} // namespace gpusched::cli
