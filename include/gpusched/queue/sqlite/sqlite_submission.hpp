#pragma once

#include <gpusched/queue/submission.hpp>

#include <filesystem>
#include <memory>

namespace gpusched::queue {

// A submission to the local queue in the database at `database` (made if need be). Each
// chunk is one transaction; the workers present are woken after each. The first chunk finds
// a worker to serve the queue, or has one started (settings.start_worker): two submitters
// racing start one, the one that starts it holding a name on the database's worker space
// meanwhile.
std::unique_ptr<Submission> open_sqlite_submission(const std::filesystem::path& database,
                                                   SubmissionSettings settings);

} // namespace gpusched::queue
