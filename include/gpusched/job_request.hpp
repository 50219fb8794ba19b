#pragma once

#include <gpusched/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// What a job asks of whoever runs it, over that runner's own options: a queued job asks its
// worker (`submit --gpus-per-job`, `--mem`, `--timeout`, `--retries`, `--nice`); nothing
// asked: the worker's. One value, carried from the command line through a store to the GPU that
// runs the job, in one encoding (encode_request). A job's label and the jobs it waits for are not
// part of it: they are the queue's to keep, which indexes them to find jobs by label and to
// release the waiting (docs/design/placement.md).
struct JobRequest {
    // Each field is initialised, so that a request may name only what it asks
    // (`{.gpus = 2}`) without a warning for the rest.
    std::optional<std::size_t> gpus{};
    std::optional<std::chrono::milliseconds> timeout{};
    std::optional<unsigned> retries{};
    // The job's CPU priority, as nice(1) takes it: higher is kinder to the machine's other
    // work. Raising it needs no privilege; lowering it below the runner's needs CAP_SYS_NICE.
    std::optional<int> nice{};
    // The GPU memory the job needs on each of its GPUs, in bytes (--mem): a GPU takes it while
    // that much is left (Placement). k_learned_memory: estimated from earlier jobs of its kind
    // (--mem auto, MemoryEstimates). Nothing: it has each GPU to itself, or its slot of
    // --jobs-per-gpu.
    std::optional<std::uint64_t> memory{};
    bool operator==(const JobRequest&) const = default;
};

// `memory` of --mem auto: no size asks for 0 bytes.
constexpr std::uint64_t k_learned_memory = 0;

// The bounds of each field, for the command line and the codec alike.
constexpr int k_least_nice = -20;
constexpr int k_most_nice = 19;
constexpr unsigned k_most_request_retries = 1'000'000;

// What a runner gives a job that asks nothing of it.
struct RunnerDefaults {
    std::size_t gpus = 1;
    std::optional<std::uint64_t> memory{};
};

// The GPUs a job takes where the runner's default is `defaults`, and the memory it needs on
// each.
std::size_t gpus_wanted(const JobRequest& request, const RunnerDefaults& defaults);
std::optional<std::uint64_t> memory_wanted(const JobRequest& request,
                                           const RunnerDefaults& defaults);

// The one rule of whether a runner that has `gpus` GPUs could ever start the job, however
// long it waited: the SQLite take, the Redis worker, the scheduler and `submit`'s warning
// all ask it.
bool can_ever_run(const JobRequest& request, std::size_t gpus, const RunnerDefaults& defaults);

// Each field `request` asks for, as ` gpus=2 timeout=5000 retries=1 nice=10 mem=21474836480`
// (a space before each word, milliseconds for the timeout, bytes for the memory or `auto`; ""
// when nothing is asked): the one encoding of a
// request, in the SQLite queue's batches.request and in a Redis job's context. Version 1 of
// it. A later version only adds words, and decode_request refuses a word it does not know, so
// that a job asking for what an older worker cannot give is refused there, never run without
// it.
std::string encode_request(const JobRequest& request);
// The request `words` encode, or what is wrong with them (a word unknown, a value out of its
// bounds). An old context's words of other kinds are the caller's to take out first.
Result<JobRequest> decode_request(std::string_view words);

} // namespace gpusched
