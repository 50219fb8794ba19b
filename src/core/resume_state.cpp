#include <gpusched/resume_state.hpp>

#include <functional>

namespace gpusched {
namespace {

std::uint64_t hash_of(std::string_view command)
{
    return std::hash<std::string_view>{}(command);
}

} // namespace

void ResumeState::add(const JoblogRecord& record)
{
    const auto hash = hash_of(record.command);
    auto [entry, inserted] = m_jobs.try_emplace(record.seq, Recorded{hash, record.succeeded()});
    if (inserted) {
        return;
    }
    if (entry->second.command_hash != hash) {
        // A later run with a changed input logged another command under this number.
        entry->second = Recorded{hash, record.succeeded()};
        return;
    }
    entry->second.succeeded = entry->second.succeeded || record.succeeded();
}

bool ResumeState::should_skip(JobId seq, std::string_view command) const
{
    if (m_mode == ResumeMode::none) {
        return false;
    }
    const auto found = m_jobs.find(seq);
    if (found == m_jobs.end() || found->second.command_hash != hash_of(command)) {
        return false;
    }
    return m_mode == ResumeMode::resume || found->second.succeeded;
}

} // namespace gpusched
