#pragma once

#include <gpusched/process_table.hpp>
#include <gpusched/sys/job_spawner.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <sys/types.h>

#include <string>
#include <unordered_map>

namespace gpusched::sys {

// The ProcessTable of the running system. A job's presence token is a pipe: the job gets its
// write end (at the place JobSpawner gives it), we keep the read end, and the kernel reports
// hang-up on it once the last process holding the write end has closed it or died; so a job
// is over when its shell is reaped and its token hung up, whatever its background processes
// did with their process group or parent.
class SystemProcessTable final : public ProcessTable {
public:
    explicit SystemProcessTable(const JobSpawner& spawner) : m_spawner(spawner) {}

    Spawned spawn(const SpawnRequest& request) override;
    bool released(int token) override;
    void forget_token(int token) override;
    void signal_group(ProcessId leader, int signal) override;
    void signal_process(ProcessId pid, int signal) override;
    bool group_exists(ProcessId leader) override;
    std::optional<Reaped> reap() override;
    std::vector<ProcessId> children() override;
    std::vector<std::vector<ProcessInfo>> find_processes(std::span<const JobTrace> jobs) override;

private:
    const JobSpawner& m_spawner;
    // The read end of each job's token, by descriptor number.
    std::unordered_map<int, UniqueFd> m_tokens;
};

} // namespace gpusched::sys
