#pragma once

#include <gpusched/sys/unique_fd.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace gpusched::sys {

// A small process that outlives a scheduler killed with SIGKILL (or by the OOM killer) and
// stops the jobs it left, so that none of them runs on unrecorded while --resume starts it
// again. Every job inherits a marker descriptor and the run's token in GPUSCHED_RUN; when
// the scheduler dies without saying goodbye, the guard sends SIGTERM once to every process
// that has either, through their process groups (RunSigns), SIGKILL `kill_after` later, and
// looks again until none is left, then exits. It holds the job log's lock meanwhile, so a
// --resume waits for it.
//
// The guard is no child of the scheduler (it is forked twice, in a session of its own), so
// the scheduler's reaping and stop rules never see it, and a signal to the scheduler's
// process group does not reach it.
class RunGuard {
public:
    // `keep` are descriptors the guard holds on to (the job log, whose lock it shares); the
    // marker gets a descriptor number of at least `lowest_marker_fd`, above those a job gets.
    RunGuard(std::chrono::milliseconds kill_after, const std::vector<int>& keep,
             int lowest_marker_fd, const std::string& run_token);
    // The run ended as it should: the guard exits without touching anything, and this
    // waits (a moment at most) until it has.
    ~RunGuard();
    RunGuard(const RunGuard&) = delete;
    RunGuard& operator=(const RunGuard&) = delete;

    // A token no other run has: the scheduler's pid and the time.
    static std::string make_run_token();

    // The descriptor each job inherits.
    int marker_fd() const { return m_marker.get(); }

private:
    UniqueFd m_channel;    // our end of a socket pair with the guard
    UniqueFd m_marker;     // the read end of a pipe whose write end is closed
    UniqueFd m_guard_exit; // a pidfd of the guard
};

} // namespace gpusched::sys
