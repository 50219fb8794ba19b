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
    // Makes this process the subreaper of its descendants (see become_child_subreaper): what
    // a job leaves behind comes back to it, to be found, waited for and stopped.
    explicit SystemProcessTable(const JobSpawner& spawner);

    Result<Spawned> spawn(const SpawnRequest& request) override;
    std::vector<int> wait(std::vector<pollfd>& others,
                          std::optional<std::chrono::milliseconds> timeout) override;
    bool released(int token) override;
    void forget_token(int token) override;
    void signal_group(ProcessId leader, int signal) override;
    void signal_process(ProcessId pid, int signal) override;
    bool group_exists(ProcessId leader) override;
    std::optional<Reaped> reap() override;
    void reap_all() override;
    std::vector<ProcessId> children() override;
    std::vector<std::vector<ProcessInfo>> find_processes(std::span<const JobTrace> jobs) override;

private:
    const JobSpawner& m_spawner;
    struct Token {
        UniqueFd read_end;
        bool released = false; // seen hung up: waited on no more
    };
    // Each job's token, by the number of its read end.
    std::unordered_map<int, Token> m_tokens;
};

} // namespace gpusched::sys
