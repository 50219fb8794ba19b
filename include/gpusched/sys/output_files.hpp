#pragma once

#include <gpusched/result.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace gpusched::sys {

// Makes `directory` where missing, with `mode` (no write bit for others; the caller says who
// may read: a queue's output, whoever may read the queue), gives that mode to each directory
// of ours from `trusted` (excluded) down to it, and checks each: a real directory, not a
// link, of ours or root's, that no other user can write. Files a job's output goes to are
// opened there on our behalf, so a directory another user made or can write first (with
// links planted in it) is refused, naming it.
void make_own_directory(const std::filesystem::path& trusted,
                        const std::filesystem::path& directory, mode_t mode = 0700);

// --output-dir: each attempt's stdout and stderr go to files named by its sequence number
// (`7.out`, `7.err`; a retry gets `7.2.out`, ...), with `7.info` beside them telling the
// command, GPU, attempt and outcome.
class OutputFiles {
public:
    // Whether each attempt gets its .info file: a queue worker's own output directory does
    // without, since the queue records all it says (and a file less per job is a faster start).
    enum class Info { written, left_out };

    // Creates the directory (and its parents) when missing.
    explicit OutputFiles(std::filesystem::path directory, Info info = Info::written);

    struct Opened {
        UniqueFd out;
        UniqueFd err;
    };
    Opened open(JobId job, unsigned attempt) const;
    // Writes the attempt's .info file (unless left out); on failure (a full disk) removes what
    // was written and returns the error, naming the call and the file.
    Result<void> write_info(const JoblogRecord& record, unsigned attempt) const;
    // Where an attempt's output is, for a person to look: "output in out/7.2.out,
    // out/7.2.err", or for a queue worker's own directory "its output: gpusched logs 7".
    std::string describe(JobId job, unsigned attempt) const;
    const std::filesystem::path& directory() const { return m_directory; }
    // The last `bytes` of what an attempt wrote to its stderr, then of its stdout ("" for a
    // file that cannot be read).
    std::string tail(JobId job, unsigned attempt, std::size_t bytes) const;

private:
    std::filesystem::path base(JobId job, unsigned attempt) const;

    std::filesystem::path m_directory;
    Info m_info;
};

// Where OutputFiles in `directory` puts an attempt's files, without the extension
// (`7`, then `7.2` for a retry, ...).
std::filesystem::path output_base(const std::filesystem::path& directory, JobId job,
                                  unsigned attempt);

// The last attempt's stdout and stderr files of job `job` in `directory`.
struct OutputPaths {
    std::filesystem::path out, err;
};
OutputPaths last_output_of(const std::filesystem::path& directory, JobId job);

// Removes every attempt's files of job `job` in `directory` (.out, .err, .info).
void remove_output_of(const std::filesystem::path& directory, JobId job);

} // namespace gpusched::sys
