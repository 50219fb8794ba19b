#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace gpusched::sys {

// How the run guard tells a run's processes apart from all others on the machine, once their
// scheduler is gone and they are nobody's children any more: the marker descriptor they
// inherited, the run's token in the environment they inherited, or a process group in which
// one of those was seen (what Python's subprocess starts closes inherited descriptors, but
// stays in the job's group and keeps its environment).
struct RunSigns {
    std::string marker;             // "pipe:[INODE]", as readlink of /proc/PID/fd/N reads
    std::string environment_entry;  // "GPUSCHED_RUN=TOKEN"
    std::set<pid_t> groups;         // the run's process groups seen so far
    std::set<pid_t> foreign_groups; // never taken as the run's: the scheduler's, the guard's
};

struct RunProcess {
    pid_t pid = 0;
    pid_t group = 0;
};

// Every live process of the run (zombies are dead) but the caller, from /proc; adds the
// groups it finds them in to `signs.groups`. Other users' processes are never the run's.
std::vector<RunProcess> find_run_processes(RunSigns& signs);

} // namespace gpusched::sys
