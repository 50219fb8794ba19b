#pragma once

#include <gpusched/queue/job_record.hpp>
#include <gpusched/queue/submission.hpp>

namespace gpusched::cli {

// Logs how a queue's job ended, as a run logs its jobs' ends; true when it succeeded.
bool report_job_end(const queue::JobRecord& job);
// The same for a job a submitter follows; where the store says which host ran it (Redis),
// the job is named by its number in the submission and its queue id, and its host is named.
bool report_job_end(const queue::EndedJob& ended);

} // namespace gpusched::cli
