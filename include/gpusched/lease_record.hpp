#pragma once

#include <cstdint>
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
    // The GPU memory promised to it on each of its GPUs (--mem), in bytes.
    std::optional<std::uint64_t> memory{};
};

// Who holds a GPU's lease, written by the holder into the GPU's record file for `gpusched
// status`. The lease is the truth; this is information, and anyone may write or remove the
// file. It holds what `ps` already shows every user (user, PIDs, start times, commands),
// never the environment.
struct LeaseRecord {
    std::string user;
    unsigned uid = 0;
    long gpusched_pid = 0; // the scheduler or `gpusched exec` that took the lease
    std::vector<LeaseHolder> jobs;
    double since = 0;                  // when it took the lease (0: not said)
    std::optional<std::size_t> queued; // jobs it still has to start, where it knows
    // Its fair-share standing, as it tells its waiters: the GPU-seconds its ended jobs used,
    // and its weight (--share).
    double used = 0;
    double share = 1;
};

// True when `gpusched exec` took the lease: it became its command, the one process the record
// names, so that process is the taker itself (a run's jobs are processes of their own).
bool held_by_exec(const LeaseRecord& record);

// One line of JSON; commands are cut to the length the log shows, invalid UTF-8 replaced.
std::string format_lease_record(const LeaseRecord& record);
// Nothing when `text` is not a record (an empty file, one being written, a stranger's bytes).
std::optional<LeaseRecord> parse_lease_record(std::string_view text);

// Who holds a lease, for a log line: "alice (pid 4400: python train.py)", "alice (gpusched pid
// 4321, 3 jobs)", or "another process" when there is no record to tell.
std::string describe_lease_holder(const std::optional<LeaseRecord>& record);

// The process that took a lease and its user, as the kernel tells them: whoever asks the lease
// gets them, and nobody can write them.
struct LeaseTaker {
    long pid = 0; // 0 when it is in a PID namespace the asker cannot see into
    unsigned uid = 0;
    std::string user;
};

// What a record says next to the taker.
enum class RecordCheck {
    none,       // no record, or none that parses
    matches,    // it names the taker's pid and uid
    foreign,    // it names another process: left behind, or planted
    unverified, // the taker could not be asked, so the record may be anyone's
};

// Who holds a lease, as far as can be told.
struct LeaseOwner {
    std::optional<LeaseTaker> taker;
    std::optional<LeaseRecord> record; // only when it matches the taker, or cannot be checked
    RecordCheck check = RecordCheck::none;
};

// Keeps the record only where it names the taker: a record file is anyone's writing.
LeaseOwner identify_lease_owner(std::optional<LeaseTaker> taker, std::optional<LeaseRecord> record);

// For a waiter's log line and status line: "alice's run 4711 since 10:02", "alice's exec 4712
// (python train.py) since 10:05" for the command of a `gpusched exec`, "bob's process 4321"
// when only the kernel can tell, or "another process".
std::string describe_lease_wait(const LeaseOwner& owner);

// For a log line, as above, or "bob (pid 4321)" when only the kernel can tell.
std::string describe_lease_holder(const LeaseOwner& owner);

} // namespace gpusched
