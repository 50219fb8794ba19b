#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace gpusched {

// What a job asks of whoever runs it, over that runner's own options: a queued job asks its
// worker (`submit --gpus-per-job`, `--timeout`, `--retries`); nothing asked: the worker's.
// One value, carried from the command line through a store to the GPU that runs the job.
struct JobRequest {
    std::optional<std::size_t> gpus;
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<unsigned> retries;
    bool operator==(const JobRequest&) const = default;
};

// What a job asks, filled in with what its runner gives when it asks nothing.
struct RunnerDefaults {
    std::size_t gpus = 1;
};

// The GPUs a job takes where the runner's default is `defaults`.
std::size_t gpus_wanted(const JobRequest& request, const RunnerDefaults& defaults);

// The one rule of whether a runner that has `gpus` GPUs could ever start the job, however
// long it waited: the SQLite take, the Redis worker, the scheduler and `submit`'s warning
// all ask it.
bool can_ever_run(const JobRequest& request, std::size_t gpus, const RunnerDefaults& defaults);

} // namespace gpusched
