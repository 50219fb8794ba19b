#include <gpusched/sys/process_tree.hpp>

#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>

namespace gpusched::sys {

void become_child_subreaper()
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        throw_errno("prctl PR_SET_CHILD_SUBREAPER");
    }
}

std::vector<pid_t> direct_children()
{
    // The scheduler is single-threaded, so its main thread's list holds every child.
    std::ifstream list(fmt::format("/proc/self/task/{}/children", getpid()));
    std::vector<pid_t> children;
    pid_t pid = 0;
    while (list >> pid) {
        children.push_back(pid);
    }
    return children;
}

} // namespace gpusched::sys
