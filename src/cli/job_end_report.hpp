#pragma once

#include <gpusched/queue/job_record.hpp>

namespace gpusched::cli {

// Logs how a queue's job ended, as a run logs its jobs' ends; true when it succeeded.
bool report_job_end(const queue::JobRecord& job);

} // namespace gpusched::cli
