#pragma once

#include <gpusched/process_table.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace gpusched::testing {

// A process table with no processes: the test says which processes exist, which hold which
// job's token and which are our children, and reads back the signals the rules sent. A
// process signalled with SIGKILL dies at once; other signals kill only those the test did not
// mark as ignoring them.
class FakeProcessTable final : public ProcessTable {
public:
    struct Process {
        ProcessId pid = 0;
        ProcessId group = 0;
        int token = -1;       // the job token it holds, or -1
        ProcessId parent = 0; // 0: it is our child
        bool ignores_term = false;
    };
    struct Signal {
        ProcessId target = 0; // a pid, or minus a process group
        int signal = 0;
        bool operator==(const Signal&) const = default;
    };

    // A job shell: its own group leader, holding a new token, our child.
    Spawned spawn(const SpawnRequest&) override
    {
        const ProcessId pid = m_next_pid++;
        const int token = m_next_token++;
        m_processes[pid] = Process{pid, pid, token, 0, false};
        ++spawned;
        return {pid, token, 0};
    }
    bool released(int token) override
    {
        return std::none_of(m_processes.begin(), m_processes.end(),
                            [token](const auto& entry) { return entry.second.token == token; });
    }
    void forget_token(int token) override { forgotten.insert(token); }

    void signal_group(ProcessId leader, int signal) override
    {
        sent.push_back({-leader, signal});
        std::vector<ProcessId> members;
        for (const auto& [pid, process] : m_processes) {
            if (process.group == leader) {
                members.push_back(pid);
            }
        }
        for (const ProcessId pid : members) {
            deliver(pid, signal);
        }
    }
    void signal_process(ProcessId pid, int signal) override
    {
        sent.push_back({pid, signal});
        deliver(pid, signal);
    }
    bool group_exists(ProcessId leader) override
    {
        return std::any_of(m_processes.begin(), m_processes.end(),
                           [leader](const auto& entry) { return entry.second.group == leader; });
    }
    std::optional<Reaped> reap() override
    {
        if (m_ended.empty()) {
            return std::nullopt;
        }
        const Reaped reaped = m_ended.front();
        m_ended.pop_front();
        return reaped;
    }
    std::vector<ProcessId> children() override
    {
        std::vector<ProcessId> children;
        for (const auto& [pid, process] : m_processes) {
            if (process.parent == 0) {
                children.push_back(pid);
            }
        }
        return children;
    }
    std::vector<std::vector<ProcessInfo>> find_processes(std::span<const JobTrace> jobs) override
    {
        ++searches;
        std::vector<std::vector<ProcessInfo>> found(jobs.size());
        for (const auto& [pid, process] : m_processes) {
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                if ((jobs[i].group > 0 && process.group == jobs[i].group) ||
                    process.token == jobs[i].token) {
                    found[i].push_back({pid, process.group, "p" + std::to_string(pid)});
                    break;
                }
            }
        }
        return found;
    }

    // What the test sets up.
    void add(Process process) { m_processes[process.pid] = process; }
    void ignore_term(ProcessId pid) { m_processes.at(pid).ignores_term = true; }
    // The process exits by itself with `code`; its children come back to us (we are their
    // subreaper).
    void exit(ProcessId pid, int code) { end(pid, code, 0); }
    bool alive(ProcessId pid) const { return m_processes.contains(pid); }
    std::vector<Signal> sent_to(ProcessId target) const
    {
        std::vector<Signal> to;
        std::copy_if(sent.begin(), sent.end(), std::back_inserter(to),
                     [target](const Signal& signal) { return signal.target == target; });
        return to;
    }

    std::vector<Signal> sent;
    std::set<int> forgotten;
    int searches = 0;
    int spawned = 0;

private:
    void deliver(ProcessId pid, int signal)
    {
        const auto found = m_processes.find(pid);
        if (found == m_processes.end()) {
            return;
        }
        if (signal == 9 || !found->second.ignores_term) {
            end(pid, 0, signal);
        }
    }
    void end(ProcessId pid, int code, int signal)
    {
        const bool child = m_processes.at(pid).parent == 0;
        m_processes.erase(pid);
        if (child) {
            m_ended.push_back({pid, code, signal});
        }
        for (auto& [orphan, process] : m_processes) {
            if (process.parent == pid) {
                process.parent = 0;
            }
        }
    }

    std::map<ProcessId, Process> m_processes;
    std::deque<Reaped> m_ended;
    ProcessId m_next_pid = 100;
    int m_next_token = 1000;
};

} // namespace gpusched::testing
