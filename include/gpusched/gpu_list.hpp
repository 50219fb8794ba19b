#pragma once

#include <gpusched/errors.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// The GPU ids given with --gpus: each token may hold several ids separated by commas
// ("0 1 2", "0,1,2"), a range of indices ("0-3"), or opaque ids ("GPU-<uuid>",
// "MIG-<uuid>") that are passed to jobs unchanged. An empty entry or an id given twice is
// an error, because both would silently change how many jobs run at once.
Parsed<std::vector<std::string>> parse_gpu_list(const std::vector<std::string>& tokens);

// True when every comma-separated part of `token` is an index, a range, or a GPU-/MIG- id.
// Lets the command line tell `--gpus 0 1 commands.txt` apart: the file is no GPU.
bool looks_like_gpu_ids(std::string_view token);

// The entries of a CUDA_VISIBLE_DEVICES value, kept exactly as written so that each job
// gets the scheduler's own entry, never a renumbered index. An empty value means no GPU.
Parsed<std::vector<std::string>> parse_visible_devices(std::string_view value);

} // namespace gpusched
