#include <gpusched/sys/process_tree.hpp>

#include <gpusched/sys/proc_files.hpp>
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

// A chain longer than this is no real process tree; it bounds the walk all the same.
constexpr int k_deepest = 256;

std::vector<pid_t> ancestry(pid_t pid)
{
    std::vector<pid_t> chain;
    for (int depth = 0; depth < k_deepest && pid > 1; ++depth) {
        chain.push_back(pid);
        const auto stat = read_process_stat(pid);
        if (!stat) {
            break;
        }
        pid = stat->parent;
    }
    return chain;
}

bool descends_from(pid_t pid, pid_t ancestor)
{
    for (int depth = 0; depth < k_deepest && pid > 1; ++depth) {
        if (pid == ancestor) {
            return true;
        }
        const auto stat = read_process_stat(pid);
        if (!stat) {
            return false;
        }
        pid = stat->parent;
    }
    return false;
}

} // namespace gpusched::sys
