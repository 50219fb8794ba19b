#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gpusched {

// A process running under a GPU's lease, as one look at the lease records saw it.
struct HeldJob {
    std::string gpu;
    long pid = 0;
    double since = 0; // seconds since the epoch
    std::string user;
    std::string command;
};

// A stretch of time one job ran on one GPU. `end` is 0 while it still runs.
struct GpuSpan {
    HeldJob job;
    double end = 0;
};

struct UtilizationSample {
    double at = 0;
    unsigned percent = 0;
};

// What `gpusched serve` saw run on each GPU, and how busy each was, over the last `keep`
// seconds: built from looks at the lease records (each a list of what runs now) and samples
// of NVML. Time is passed in, so that the rules are tested without a clock.
class GpuHistory {
public:
    explicit GpuHistory(double keep_seconds) : m_keep(keep_seconds) {}

    // What runs now: a job seen before goes on, one no longer seen ended at `now`.
    void observe(double now, const std::vector<HeldJob>& running);
    void observe_utilization(double now, const std::string& gpu, unsigned percent);

    // The spans that overlap [from, now], the running ones last.
    std::vector<GpuSpan> spans(double from) const;
    std::vector<UtilizationSample> utilization(const std::string& gpu, double from) const;

private:
    using Key = std::tuple<std::string, long, double>; // gpu, pid, since
    void forget_before(double before);

    double m_keep;
    std::map<Key, HeldJob> m_running;
    std::deque<GpuSpan> m_ended; // in the order they ended
    std::map<std::string, std::deque<UtilizationSample>> m_utilization;
};

} // namespace gpusched
