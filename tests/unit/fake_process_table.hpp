#pragma once

#include <gpusched/process_table.hpp>
#include <gpusched/time_source.hpp>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpusched::testing {

// A time that moves only when a test, or a fake waiting for its next event, moves it.
class FakeClock final : public TimeSource {
public:
    using Duration = std::chrono::steady_clock::duration;

    std::chrono::steady_clock::time_point now() const override { return m_now; }
    std::chrono::system_clock::time_point wall_now() const override
    {
        return k_wall_start + (m_now - k_start);
    }
    Duration elapsed() const { return m_now - k_start; }
    void advance(Duration by) { m_now += by; }
    void advance_to(std::chrono::steady_clock::time_point time) { m_now = std::max(m_now, time); }

    static constexpr std::chrono::steady_clock::time_point k_start{std::chrono::hours(1)};
    static constexpr std::chrono::system_clock::time_point k_wall_start{
        std::chrono::seconds(1'800'000'000)};

private:
    std::chrono::steady_clock::time_point m_now = k_start;
};

// A process table with no processes: the test says which processes exist, which hold which
// job's token and which are our children, and reads back the signals the rules sent. A
// process signalled with SIGKILL dies at once; other signals kill only those the test did not
// mark as ignoring them (SIGSTOP and SIGCONT stop and continue it).
//
// Its wait runs a script in the time of a FakeClock: what the test scheduled happens at its
// time, and the clock moves to the next thing scheduled, or to the end of the wait. A wait
// with no end and nothing scheduled would last for ever: it throws.
class FakeProcessTable final : public ProcessTable {
public:
    using Event = std::function<void()>;

    explicit FakeProcessTable(FakeClock* clock = nullptr) : m_clock(clock) {}

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

    // A job shell: its own group leader, holding a new token, our child. on_spawn, where
    // set, scripts what it does.
    Result<Spawned> spawn(const SpawnRequest& request) override
    {
        if (m_refusals > 0) {
            --m_refusals;
            ++refused;
            return Failure{m_refusal_what + ": " + std::strerror(m_refusal_error), m_refusal_error};
        }
        const ProcessId pid = m_next_pid++;
        const int token = m_next_token++;
        m_processes[pid] = Process{pid, pid, token, 0, false};
        m_tokens.insert(token);
        ++spawned;
        commands.push_back(request.command);
        if (on_spawn) {
            on_spawn(pid, request.command);
        }
        return Spawned{pid, token};
    }

    std::vector<int> wait(std::vector<pollfd>& others,
                          std::optional<std::chrono::milliseconds> timeout) override
    {
        if (m_clock == nullptr) {
            throw std::logic_error("a FakeProcessTable waits only on a FakeClock");
        }
        if (++waits > k_most_waits) {
            throw std::logic_error("the runner waited 100000 times: it spins");
        }
        if (!something_ready(others)) {
            const auto end = timeout ? std::optional(m_clock->now() + *timeout) : std::nullopt;
            if (!m_script.empty() && (!end || m_script.begin()->first <= *end)) {
                const auto next = m_script.begin();
                m_clock->advance_to(next->first);
                const Event event = std::move(next->second);
                m_script.erase(next);
                event();
            } else if (end) {
                m_clock->advance_to(*end);
            } else {
                throw std::logic_error("the runner waits for ever: nothing is scheduled");
            }
        }
        return released_tokens(others);
    }
    bool released(int token) override
    {
        return std::none_of(m_processes.begin(), m_processes.end(),
                            [token](const auto& entry) { return entry.second.token == token; });
    }
    void forget_token(int token) override { forgotten.insert(token); }

    void signal_group(ProcessId leader, int signal) override
    {
        note({-leader, signal});
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
        note({pid, signal});
        deliver(pid, signal);
    }
    bool group_exists(ProcessId leader) override
    {
        return std::any_of(m_processes.begin(), m_processes.end(),
                           [leader](const auto& entry) { return entry.second.group == leader; });
    }
    void reap_all() override
    {
        m_processes.clear();
        m_ended.clear();
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
    // Runs `event` when the clock reaches `time`, in a wait.
    void at(std::chrono::steady_clock::time_point time, Event event)
    {
        m_script.emplace(time, std::move(event));
    }
    void after(FakeClock::Duration delay, Event event)
    {
        at(m_clock->now() + delay, std::move(event));
    }
    // The next `count` spawns fail with `error` (EAGAIN: a process limit) in `what` (the
    // shell, or the pipe of the job's token).
    void refuse_spawns(int count, int error, std::string what = "/bin/sh")
    {
        m_refusals = count;
        m_refusal_error = error;
        m_refusal_what = std::move(what);
    }
    // Whether a descriptor among the waiter's others is ready (a FakeSignals' pending signal).
    std::function<bool(int fd)> fd_ready;
    std::function<void(ProcessId pid, const std::string& command)> on_spawn;
    void ignore_term(ProcessId pid) { m_processes.at(pid).ignores_term = true; }
    // The process exits by itself with `code`, if it still runs; its children come back to
    // us (we are their subreaper).
    void exit(ProcessId pid, int code)
    {
        if (alive(pid)) {
            end(pid, code, 0);
        }
    }
    bool alive(ProcessId pid) const { return m_processes.contains(pid); }
    int token_of(ProcessId pid) const { return m_processes.at(pid).token; }
    std::vector<Signal> sent_to(ProcessId target) const
    {
        std::vector<Signal> to;
        std::copy_if(sent.begin(), sent.end(), std::back_inserter(to),
                     [target](const Signal& signal) { return signal.target == target; });
        return to;
    }

    bool stopped(ProcessId pid) const { return m_stopped.contains(pid); }
    // The terminal stops the process (SIGTTIN: it read /dev/tty from a background group); we
    // are told, as waitpid's WUNTRACED tells of a child.
    void stop_by_terminal(ProcessId pid, int signal = SIGTTIN)
    {
        if (!alive(pid)) {
            return;
        }
        m_stopped.try_emplace(pid);
        if (m_processes.at(pid).parent == 0) {
            m_ended.push_back({pid, 0, signal, true});
        }
    }

    std::vector<Signal> sent;
    std::vector<std::chrono::steady_clock::time_point> sent_at; // as `sent`, when a clock runs
    std::set<int> forgotten;
    std::vector<std::string> commands; // of the jobs spawned, in order
    int searches = 0;
    int spawned = 0;
    int refused = 0;
    int waits = 0;

private:
    static constexpr int k_most_waits = 100'000;

    void note(Signal signal)
    {
        sent.push_back(signal);
        if (m_clock != nullptr) {
            sent_at.push_back(m_clock->now());
        }
    }
    void deliver(ProcessId pid, int signal)
    {
        const auto found = m_processes.find(pid);
        if (found == m_processes.end()) {
            return;
        }
        const auto stopped = m_stopped.find(pid);
        if (signal == SIGSTOP) {
            m_stopped.try_emplace(pid);
        } else if (signal == SIGCONT) {
            if (stopped != m_stopped.end()) {
                const auto pending = std::move(stopped->second);
                m_stopped.erase(stopped);
                for (const int held : pending) {
                    deliver(pid, held);
                }
            }
        } else if (stopped != m_stopped.end() && signal != SIGKILL) {
            stopped->second.push_back(signal); // acted on once it is continued
        } else if (signal == SIGKILL || !found->second.ignores_term) {
            end(pid, 0, signal);
        }
    }
    bool something_ready(std::vector<pollfd>& others)
    {
        bool ready = !m_ended.empty();
        for (auto& fd : others) {
            fd.revents = fd_ready && fd_ready(fd.fd) ? POLLIN : 0;
            ready = ready || fd.revents != 0;
        }
        for (const int token : m_tokens) {
            ready = ready || released(token);
        }
        return ready;
    }
    std::vector<int> released_tokens(std::vector<pollfd>& others)
    {
        something_ready(others); // the revents of what the script made ready
        std::vector<int> tokens;
        for (const int token : m_tokens) {
            if (released(token)) {
                tokens.push_back(token);
            }
        }
        for (const int token : tokens) {
            m_tokens.erase(token);
        }
        return tokens;
    }
    void end(ProcessId pid, int code, int signal)
    {
        const bool child = m_processes.at(pid).parent == 0;
        m_processes.erase(pid);
        m_stopped.erase(pid);
        if (child) {
            m_ended.push_back({pid, code, signal});
        }
        for (auto& [orphan, process] : m_processes) {
            if (process.parent == pid) {
                process.parent = 0;
            }
        }
    }

    FakeClock* m_clock;
    std::map<ProcessId, Process> m_processes;
    std::map<ProcessId, std::vector<int>> m_stopped; // with the signals held until SIGCONT
    std::deque<Reaped> m_ended;
    std::set<int> m_tokens; // spawned and not yet reported released
    std::multimap<std::chrono::steady_clock::time_point, Event> m_script;
    int m_refusals = 0;
    int m_refusal_error = 0;
    std::string m_refusal_what;
    ProcessId m_next_pid = 100;
    int m_next_token = 1000;
};

} // namespace gpusched::testing
