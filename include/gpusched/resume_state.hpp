#pragma once

#include <gpusched/joblog.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpusched {

enum class ResumeMode {
    none,
    resume,        // skip every job the log records as ended, whatever its outcome
    resume_failed, // skip only jobs the log records as succeeded; run the failed ones again
};

// What an earlier run's job log says is already done. A job is recognised by its command,
// wherever it stands in the input, so a reordered input (a shuffled grid) skips exactly the
// jobs that ran. A command listed N times needs N finished jobs in the log to be skipped N
// times. An attempt that a stop of the run interrupted never counts as finished.
class ResumeState {
public:
    explicit ResumeState(ResumeMode mode) : m_mode(mode) {}

    // Records in file order.
    void add(const JoblogRecord& record);
    // Asked once for each input command, in input order: true when the log holds a finished
    // job with this command that no earlier input line has already claimed.
    bool should_skip(std::string_view command);
    std::size_t recorded_jobs() const { return m_jobs.size(); }

    // A job of the log whose command is in no input line read so far.
    struct Unmatched {
        JobId seq = 0;
        std::string command; // shortened for messages
    };
    // After the input has ended: the log's jobs whose command matched no input line, in the
    // order of their sequence numbers.
    std::vector<Unmatched> unmatched() const;

private:
    using CommandHash = std::uint64_t;
    // The records of one sequence number and command, which may come from several runs:
    // a success always ends a job (nothing retries it), so each one is a finished job; a
    // failure that ended by itself is one when no record of the same job follows it (a
    // retry's would); an interrupted attempt never is.
    struct Job {
        std::size_t successes = 0;
        bool last_failed_by_itself = false;
        std::string command; // shortened, for messages
    };
    struct Tally {
        std::size_t finished = 0; // jobs the mode counts as done
        std::size_t claimed = 0;  // input lines that matched, skipped or not
    };

    std::size_t finished(const Job& job) const;
    void count_jobs();

    ResumeMode m_mode;
    bool m_counted = false;
    // Hashes rather than commands: the log of a long sweep holds many long commands.
    std::map<std::pair<JobId, CommandHash>, Job> m_jobs;
    std::unordered_map<CommandHash, Tally> m_tallies;
};

} // namespace gpusched
