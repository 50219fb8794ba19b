#pragma once

#include <gpusched/gpu_pool.hpp>
#include <gpusched/sys/host_leases.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <chrono>
#include <functional>
#include <optional>

namespace gpusched::sys {

struct LeaseAcquisition {
    enum class Result { acquired, none_free, timed_out, signalled };
    Result result = Result::none_free;
    GpuSlots slots;   // acquired: the GPUs now leased to us
    GpuSlots refused; // none_free: the GPUs others hold
    int signal = 0;   // signalled: the signal that ended the wait
};

struct AcquireOptions {
    std::size_t count = 1;
    // The GPUs it may take (exec --mem: those with room); nothing: any.
    std::optional<GpuSlots> among;
    bool wait = true;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // Called once, when the wait begins, with the GPUs others hold.
    std::function<void(const GpuSlots& refused)> on_wait;
};

// Leases `count` GPUs, waiting without polling until that many are ours. What it gets while
// it waits (free, or handed over by a run at a job boundary) it keeps, except what a process
// that began to wait earlier waits for: so the oldest waiter always gets all it needs, and two
// waiters never each hold what the other needs, forever. Each wait ends when a holder hands
// the lease over or lets go (its connection to the holder hangs up), on a stop signal from
// `signals` (which must carry SIGINT, SIGTERM and SIGHUP; SIGCHLD is let through), or at
// the deadline; what it held is then let go.
LeaseAcquisition acquire_leases(HostLeases& leases, SignalChannel& signals,
                                const AcquireOptions& options);

} // namespace gpusched::sys
