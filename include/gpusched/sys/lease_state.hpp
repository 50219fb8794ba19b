#pragma once

#include <gpusched/lease_record.hpp>
#include <gpusched/sys/lock_directory.hpp>

#include <optional>
#include <string>

namespace gpusched::sys {

// Who holds the lease socket `name` (of GPU `key`): the taker as the kernel tells it, asked
// through `connection` (a waiter's, connected to the holder) or else through a connection of
// our own, and the record of `key` in `directory` where it names that taker, with the jobs
// that have ended left out. Looks without taking anything, so `gpusched status` never gets in
// a scheduler's way.
LeaseOwner read_lease_owner(const std::string& name, int connection, const LockDirectory* directory,
                            const std::string& key);

// The record in a record file, whoever wrote it.
std::optional<LeaseRecord> read_lease_record(int fd);

} // namespace gpusched::sys
