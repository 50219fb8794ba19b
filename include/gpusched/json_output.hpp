#pragma once

// The words every `--json` output shares (docs/json.md, docs/json-schema.json): one document
// per command, an object that says which command wrote it and in which version of the
// vocabulary; instants as seconds since the epoch and durations as `*_seconds`, both to the
// millisecond; GPUs as arrays of ids; a signal by its name; null for what is not known or did
// not happen (never 0, which scripts would take for a value).
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpusched {

using Json = nlohmann::ordered_json;

// Raised when a field is removed, renamed or changes meaning; adding one keeps it.
// 3: one vocabulary for every command (1 and 2 were `report --json`'s alone).
constexpr int k_json_schema_version = 3;

// {"schema_version": 3, "command": COMMAND}, for the command to fill in.
Json json_document(std::string_view command);

// Seconds to the millisecond: 2.217, not 2.2169999999999996.
Json json_seconds(double seconds);
// An instant in seconds since the epoch, or null for one that never came (0) or that no
// clock could have noted (1e300).
Json json_instant(double epoch_seconds);
// "0,1" as ["0", "1"]; "" as [].
Json json_gpu_ids(std::string_view ids);
// 9 as "SIGKILL"; 0 (none) as null.
Json json_signal(int signal);

// The document as printed, indented, with a newline: bytes that are not UTF-8 (a command
// is bytes) are replaced rather than refused.
std::string format_json(const Json& document);

} // namespace gpusched
