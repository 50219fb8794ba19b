#pragma once

#include <gpusched/lease_record.hpp>
#include <gpusched/sys/lock_directory.hpp>

#include <optional>
#include <string>

namespace gpusched::sys {

struct LeaseState {
    bool leased = false;
    std::optional<LeaseRecord> record; // while leased, and when the holder wrote one
};

// Whether some process holds the lease of `key` (looked at without taking it) and what its
// record says, with the jobs that have ended left out.
LeaseState read_lease_state(const LockDirectory& directory, const std::string& key);

// The record in a lock file, whoever holds it.
std::optional<LeaseRecord> read_lease_record(int fd);

} // namespace gpusched::sys
