#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::sys {

// What /proc/PID/stat says of a process that gpusched needs.
struct ProcessStat {
    char state = 0; // 'Z' or 'X': dead, whatever still holds its pid
    pid_t parent = 0;
    pid_t group = 0;
    unsigned long long started = 0; // clock ticks from boot to its start (0 when unread)
    bool dead() const { return state == 'Z' || state == 'X'; }
};

// Nothing when the process is gone or its stat cannot be read.
std::optional<ProcessStat> read_process_stat(pid_t pid);

// Its command name (/proc/PID/comm), or "" when gone.
std::string process_name(pid_t pid);

// The pids of every process of this process's user but itself.
std::vector<pid_t> own_processes();
// True when process `pid` lives in a network namespace other than ours (`unshare -n`, a
// container): what it binds there cannot be seen here. False when there is no such process,
// or its namespace cannot be read.
bool in_another_network_namespace(pid_t pid);
// When process `pid` started, in seconds since the epoch (to the clock tick); nothing when it
// is gone. A process that started after X cannot be the one that did X: its pid was reused.
std::optional<double> process_start_time(pid_t pid);
// The pids of every process but this one.
std::vector<pid_t> every_process();

// True when one of the process's descriptors links to something `wanted` accepts (readlink
// of /proc/PID/fd/N: "pipe:[INODE]", a path, ...); false where they cannot be read.
bool has_descriptor(pid_t pid, const std::function<bool(std::string_view target)>& wanted);

} // namespace gpusched::sys
