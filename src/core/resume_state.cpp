#include <gpusched/resume_state.hpp>

#include <gpusched/job_messages.hpp>

#include <functional>

namespace gpusched {
namespace {

std::uint64_t hash_of(std::string_view command)
{
    return std::hash<std::string_view>{}(command);
}

} // namespace

// Records of a sequence number and a command, in file order: attempts of one job (retries),
// or jobs of several runs that stood at the same place in their input.
void ResumeState::add(const JoblogRecord& record)
{
    const auto hash = hash_of(record.command);
    auto [entry, inserted] = m_jobs.try_emplace({record.seq, hash});
    auto& job = entry->second;
    if (inserted) {
        job.command = shorten_command(record.command);
    }
    // An interrupted attempt that exited 0 (it caught the signal) did not get to finish.
    const bool succeeded = record.succeeded() && !record.interrupted();
    job.successes += succeeded ? 1 : 0;
    job.last_failed_by_itself = !succeeded && !record.interrupted();
    m_counted = false;
}

std::size_t ResumeState::finished(const Job& job) const
{
    if (m_mode == ResumeMode::resume_failed) {
        return job.successes;
    }
    return job.successes + (job.last_failed_by_itself ? 1 : 0);
}

void ResumeState::count_jobs()
{
    m_tallies.clear();
    for (const auto& [key, job] : m_jobs) {
        m_tallies[key.second].finished += finished(job);
    }
    m_counted = true;
}

bool ResumeState::should_skip(std::string_view command)
{
    if (m_mode == ResumeMode::none) {
        return false;
    }
    if (!m_counted) {
        count_jobs();
    }
    const auto found = m_tallies.find(hash_of(command));
    if (found == m_tallies.end()) {
        return false;
    }
    auto& tally = found->second;
    ++tally.claimed;
    return tally.claimed <= tally.finished;
}

std::vector<ResumeState::Unmatched> ResumeState::unmatched() const
{
    std::vector<Unmatched> jobs;
    for (const auto& [key, job] : m_jobs) {
        const auto tally = m_tallies.find(key.second);
        if (tally == m_tallies.end() || tally->second.claimed == 0) {
            jobs.push_back({key.first, job.command});
        }
    }
    return jobs;
}

} // namespace gpusched
