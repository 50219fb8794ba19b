#pragma once

#include <gpusched/job_request.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// Where and with what a job runs when it is not the run's own: a queued job runs as it was
// submitted, in its submitter's directory, environment and umask, not the worker's (as
// task-spooler and pueue run theirs). A run's own jobs have none and inherit the run's.
struct JobContext {
    std::string directory;                // absolute
    std::vector<std::string> environment; // NAME=VALUE, the submitter's
    unsigned umask = 022;
    JobRequest request{}; // what the job asks of whoever runs it
    // Whether `environment` is the submitter's whole environment, or only the variables the
    // submitter chose to carry (a Redis queue's default: see carried_environment.hpp), which
    // the job then gets over the worker's own.
    bool whole_environment = true;
};

using SharedJobContext = std::shared_ptr<const JobContext>;

// The environment as one string, each NAME=VALUE ended by a NUL byte (as in
// /proc/PID/environ), and back: the form the stores keep it in.
std::string encode_environment(const std::vector<std::string>& environment);
std::vector<std::string> decode_environment(std::string_view encoded);

// A whole context as one string: the directory, the umask in octal (followed by the request's
// words, encode_request, and ` chosen_environment=1` when the environment is not whole), then
// the environment, each ended by a NUL byte.
// Nothing when `encoded` is not one.
std::string encode_context(const JobContext& context);
std::optional<JobContext> decode_context(std::string_view encoded);

} // namespace gpusched
