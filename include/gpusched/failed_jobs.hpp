#pragma once

#include <gpusched/job.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// A job that ended failed, as the end of a run names it: what to look at next.
struct FailedJob {
    JobId id = 0;
    std::string outcome;   // "exit 3", "killed by SIGKILL (timed out)", "not run: ..."
    unsigned attempts = 1; // attempts made, retries included
    std::string command;
    std::string output; // where its output is ("output in out/7.2.out, out/7.2.err"), or ""
};

// A command on one line of a log: line breaks and other control characters become spaces,
// and what is past `longest` bytes is cut, with "..." (never in the middle of a character).
std::string one_line_command(std::string_view command, std::size_t longest = 100);

// The lines that name failed jobs after a run's summary: one per job of `named`, in order
// ("failed job 7: exit 3 after 2 attempts: python train.py --lr 3; output in out/7.2.out,
// out/7.2.err"), then, when `failed_in_all` is more, "and 12 more failed jobs: see jobs.log",
// where `rest_hint` says where the rest are recorded ("see jobs.log"; "" for nowhere).
std::vector<std::string> describe_failed_jobs(const std::vector<FailedJob>& named,
                                              std::size_t failed_in_all,
                                              std::string_view rest_hint);

} // namespace gpusched
