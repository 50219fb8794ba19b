#pragma once

#include <gpusched/gpu_discovery.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// The name of a GPU's lock file in the lock directory. The key is never used raw: every
// byte but [A-Za-z0-9-] is percent-encoded, so no id ("../x", "a/b", ".") can name a file
// outside the directory or another GPU's file, and the name reads back to the key.
std::string lease_file_name(std::string_view key);
// The key of a lock file's name, or nothing for a name lease_file_name cannot produce.
std::optional<std::string> lease_key_of_file(std::string_view file_name);

// What each GPU is leased under: its UUID when the id is an index the probe found, so that
// `--gpus 0` and a discovered GPU 0 take the same lease; else the id as given (UUIDs,
// MIG ids, and indices on a machine where CUDA lists nothing).
std::vector<std::string> lease_keys(const std::vector<std::string>& ids,
                                    const GpuInventory& inventory);

// True when some id is a plain index, which only the probe can turn into a UUID.
bool has_gpu_indices(const std::vector<std::string>& ids);

} // namespace gpusched
