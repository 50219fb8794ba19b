#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// One process that runs under a lease: a job of a scheduler, or the command of `gpusched exec`.
struct LeaseHolder {
    long pid = 0;
    double since = 0; // seconds since the epoch
    std::string command;
};

// Who holds a GPU's lease, written by the holder into its lock file for `gpusched status`.
// The lock is the truth; this is information. It holds what `ps` already shows every user
// (user, PIDs, start times, commands), never the environment.
struct LeaseRecord {
    std::string user;
    unsigned uid = 0;
    long gpusched_pid = 0; // the scheduler or `gpusched exec` that took the lease
    std::vector<LeaseHolder> jobs;
};

// One line of JSON; commands are cut to the length the log shows, invalid UTF-8 replaced.
std::string format_lease_record(const LeaseRecord& record);
// Nothing when `text` is not a record (an empty file, one being written, a stranger's bytes).
std::optional<LeaseRecord> parse_lease_record(std::string_view text);

// Who holds a lease, for a log line: "alice (pid 4400: python train.py)", "alice (gpusched pid
// 4321, 3 jobs)", or "another process" when there is no record to tell.
std::string describe_lease_holder(const std::optional<LeaseRecord>& record);

} // namespace gpusched
