#pragma once

#include <sys/types.h>

#include <vector>

namespace gpusched::sys {

// Makes this process the reaper of its orphaned descendants, so a job's background
// processes that outlive the job come back to gpusched instead of init, and can be waited
// for and killed when gpusched is stopped.
void become_child_subreaper();

// The pids of this process's direct children, reparented orphans included; empty where
// the kernel does not expose /proc/PID/task/TID/children.
std::vector<pid_t> direct_children();

// True when `pid` is `ancestor` or one of its descendants, by the parent links in /proc.
bool descends_from(pid_t pid, pid_t ancestor);
// `pid` and its ancestors below init, nearest first, by the same links: one walk, for asking
// about many ancestors at once.
std::vector<pid_t> ancestry(pid_t pid);

} // namespace gpusched::sys
