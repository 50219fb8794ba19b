#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/gpu_samples.hpp>
#include <gpusched/gpu_usage.hpp>
#include <gpusched/sys/probe_process.hpp>

#include <poll.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpusched::sys {

// Looks at the GPUs' usage inside the runner's loop, for --skip-busy (which GPUs are busy
// with someone else's work) and for jobs that ask for memory (each GPU's memory, and what
// our jobs' processes use of it). A look is a probe child whose pipe is one more descriptor
// in the loop's poll and whose --probe-timeout is one more deadline, so the loop never waits
// for it; one look at a time, taken only while its answer could change where a job goes.
//
// With --skip-busy, until the first answer no GPU is known to be free of other people's work
// and none gets a job; when looking fails (no NVML, no answer in time) every GPU is used
// from then on, and every GPU's memory is unreadable (a job that asks for memory has its GPU
// to itself).
class GpuUsageWatch final : public GpuSamples {
public:
    using Clock = std::chrono::steady_clock;

    // `busy`: --skip-busy's rule, nothing without it. `recheck`: how long after an answer a
    // skipped GPU is looked at again; `memory_every`: how often memory is read while it is
    // wanted.
    GpuUsageWatch(ProbeCommand probe, std::optional<BusyRule> busy,
                  std::chrono::milliseconds recheck, std::chrono::milliseconds memory_every,
                  std::vector<std::string> ids, const sigset_t& child_mask);

    // When on_time is due: a look's deadline; a first look (for --skip-busy, or once memory
    // is wanted); while `jobs_wait` and a GPU is skipped, the next --recheck; while
    // `memory_wanted` (a job that asks for memory runs or waits), the next reading.
    std::optional<Clock::time_point> next_deadline(bool jobs_wait, bool memory_wanted) const;
    // Starts the look that is due, or gives up the one past its deadline.
    void on_time(Clock::time_point now);
    // gpusched was stopped (Ctrl-Z) for `stopped`, a look under way with it: its
    // --probe-timeout leaves that time out.
    void postpone(Clock::duration stopped);
    void add_poll_fds(std::vector<pollfd>& fds) const;
    // Reads a look's answer; false when `ready` is not its pipe.
    bool on_ready(const pollfd& ready);
    // A child the runner reaped; false when it was not a look.
    bool on_child_exit(pid_t pid, int wait_status);
    // Kills the look under way and drops an answer not yet judged: no job would use them. A
    // later look starts as due.
    void stop() override;
    // The GPUs that became usable (true) or not (false) since the last call. An answer is
    // judged here, when `runs_our_jobs(slot)` is up to date (--max-used-mib ignores memory
    // our own jobs use).
    std::vector<std::pair<GpuSlot, bool>>
    take_changes(const std::function<bool(GpuSlot)>& runs_our_jobs) override;
    std::optional<MemoryLook> take_memory(const OwnerOf& owner_of) override;

private:
    void start_look();
    void after_look();
    void give_up(const std::string& why);
    // The answer not yet taken, parsed into m_report (or given up on).
    void absorb();
    void judge(const std::function<bool(GpuSlot)>& runs_our_jobs);

    ProbeCommand m_command;
    std::optional<BusyRule> m_rule;
    std::chrono::milliseconds m_recheck;
    std::chrono::milliseconds m_memory_every;
    std::vector<std::string> m_ids;
    sigset_t m_child_mask{};

    std::unique_ptr<ProbeProcess> m_look; // under way, or killed and not yet reaped
    bool m_wanted = false;                // the look's answer is still wanted
    std::optional<ProbeAnswer> m_answer;  // not parsed yet
    std::optional<UsageReport> m_report;  // parsed, not yet judged for --skip-busy
    bool m_memory_unread = false;         // m_report's memory is not yet taken
    bool m_answered = false;              // some answer has been judged
    bool m_given_up = false;              // --skip-busy: for good
    bool m_memory_given_up = false; // looking failed, and the memory look saying so is due
    bool m_memory_failing = false;  // since the last failure, no look has answered
    Clock::time_point m_last_answer{};
    std::optional<Clock::time_point> m_last_failure;
    static constexpr std::chrono::seconds k_retry_after_failure{10};
    static constexpr int k_readings_expire_after = 3; // looks' intervals
    std::vector<std::optional<std::string>> m_busy; // per GPU: why it is skipped
    std::vector<bool> m_told_usable;                // per GPU: what the scheduler was told
};

} // namespace gpusched::sys
