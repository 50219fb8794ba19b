#pragma once

#include <gpusched/errors.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// A GPU id is what CUDA_VISIBLE_DEVICES takes: an index (0, 12), or a GPU's UUID as
// nvidia-smi -L prints it (GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab), or a MIG instance's
// (MIG-<uuid>, or MIG-GPU-<uuid>/<gi>/<ci> from drivers before R470). CUDA also takes the
// start of a UUID (GPU-8e6b), so a prefix is an id too. Anything else would leave a job
// with no GPU at all, and CUDA programs fall back to the CPU without a word, so it is
// refused before anything runs.

// The GPU ids given with --gpus: each token may hold several ids separated by commas
// ("0 1 2", "0,1,2") and ranges of indices ("0-3"). UUIDs are passed to jobs unchanged.
// An empty entry, a malformed id, or an id given twice is an error, because each would
// silently change which GPUs jobs get or how many run at once. `option` names the source
// in errors: an option ("--gpus") or an environment variable ("GPUSCHED_GPUS").
Result<std::vector<std::string>> parse_gpu_list(const std::vector<std::string>& tokens,
                                                std::string_view option = "--gpus");

// True when every comma-separated part of `token` is shaped like an index, a range, or a
// GPU-/MIG- id, well-formed or not. Tells where a list of ids ends: in
// `--gpus 0 1 commands.txt` the file is no GPU, while `--gpus 0 1-` is a bad range.
bool looks_like_gpu_ids(std::string_view token);

// The entries of a CUDA_VISIBLE_DEVICES value, each checked as CUDA would read it (no
// ranges). UUIDs are kept exactly as written and indices lose only their leading zeros, so
// each job gets the scheduler's own entry, never a renumbered index. An empty value means
// no GPU, which is an error too.
Result<std::vector<std::string>> parse_visible_devices(std::string_view value);

} // namespace gpusched
