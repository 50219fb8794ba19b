// The newest jobs a shell's completion offers from a local queue: read newest first, each
// looked at by JobsWanted's rule, until enough are found.
#include <gpusched/queue/sqlite/sqlite_queue_backend.hpp>

#include <fmt/format.h>

namespace gpusched::queue {
namespace {

// A completion must answer at once: a queue of millions of jobs is looked through as far
// as its latest this many of the states wanted.
constexpr std::size_t k_most_rows_looked_at = 100'000;

} // namespace

std::vector<JobRecord> newest_jobs(SqliteQueue& queue, const JobsWanted& wanted)
{
    auto& database = queue.database();
    return database.read([&] {
        // The states narrow the read in SQL; the rest of the rule is JobsWanted's, on the few
        // columns it looks at. The records of the jobs it takes are read whole after.
        std::string states;
        for (std::size_t i = 0; i < wanted.states.size(); ++i) {
            states += fmt::format("{}?{}", i == 0 ? "" : ", ", i + 2);
        }
        auto rows = database.prepare(fmt::format(
            "SELECT jobs.id, jobs.state, coalesce(batches.name, ''), coalesce(batches.user, '') "
            "FROM jobs LEFT JOIN batches ON batches.id = jobs.batch WHERE jobs.queue = ?1{} "
            "ORDER BY jobs.id DESC LIMIT ?{}",
            states.empty() ? "" : fmt::format(" AND jobs.state IN ({})", states),
            wanted.states.size() + 2));
        rows.bind(1, queue.name());
        for (std::size_t i = 0; i < wanted.states.size(); ++i) {
            rows.bind(static_cast<int>(i + 2), to_string(wanted.states[i]));
        }
        rows.bind(static_cast<int>(wanted.states.size() + 2),
                  static_cast<std::int64_t>(k_most_rows_looked_at));
        std::vector<std::int64_t> ids;
        while (ids.size() < wanted.most && rows.step()) {
            JobRecord job;
            job.id = rows.integer(0);
            job.state = job_state_named(rows.text(1)).value_or(JobState::failed);
            job.name = rows.text(2);
            job.submitter.user = rows.text(3);
            if (wanted.wants(job)) {
                ids.push_back(job.id);
            }
        }
        rows.reset();
        return queue.jobs_of(ids);
    });
}

} // namespace gpusched::queue
