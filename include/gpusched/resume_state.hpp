#pragma once

#include <gpusched/joblog.hpp>

#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace gpusched {

enum class ResumeMode {
    none,
    resume,        // skip every job the log records, whatever its outcome
    resume_failed, // skip only jobs the log records as succeeded; run the failed ones again
};

// What an earlier run's job log says is already done. A job is matched by its sequence
// number and its command together, so an edited input file does not skip the wrong job.
class ResumeState {
public:
    explicit ResumeState(ResumeMode mode) : m_mode(mode) {}

    void add(const JoblogRecord& record);
    bool should_skip(JobId seq, std::string_view command) const;
    std::size_t recorded_jobs() const { return m_jobs.size(); }

private:
    struct Recorded {
        std::uint64_t command_hash = 0;
        bool succeeded = false;
    };

    ResumeMode m_mode;
    // Hashes rather than commands: the log of a long sweep holds many long commands.
    std::unordered_map<JobId, Recorded> m_jobs;
};

} // namespace gpusched
