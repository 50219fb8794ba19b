#include <gpusched/gpu_history.hpp>

#include <set>

namespace gpusched {

void GpuHistory::observe(double now, const std::vector<HeldJob>& running)
{
    std::set<Key> seen;
    for (const auto& job : running) {
        Key key{job.gpu, job.pid, job.since};
        seen.insert(key);
        m_running.try_emplace(std::move(key), job);
    }
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (seen.contains(it->first)) {
            ++it;
            continue;
        }
        m_ended.push_back({std::move(it->second), now});
        it = m_running.erase(it);
    }
    forget_before(now - m_keep);
}

void GpuHistory::observe_utilization(double now, const std::string& gpu, unsigned percent)
{
    m_utilization[gpu].push_back({now, percent});
    forget_before(now - m_keep);
}

std::vector<GpuSpan> GpuHistory::spans(double from) const
{
    std::vector<GpuSpan> shown;
    for (const auto& span : m_ended) {
        if (span.end >= from) {
            shown.push_back(span);
        }
    }
    for (const auto& [key, job] : m_running) {
        shown.push_back({job, 0});
    }
    return shown;
}

std::vector<UtilizationSample> GpuHistory::utilization(const std::string& gpu, double from) const
{
    std::vector<UtilizationSample> shown;
    if (const auto found = m_utilization.find(gpu); found != m_utilization.end()) {
        for (const auto& sample : found->second) {
            if (sample.at >= from) {
                shown.push_back(sample);
            }
        }
    }
    return shown;
}

void GpuHistory::forget_before(double before)
{
    while (!m_ended.empty() && m_ended.front().end < before) {
        m_ended.pop_front();
    }
    for (auto& [gpu, samples] : m_utilization) {
        while (!samples.empty() && samples.front().at < before) {
            samples.pop_front();
        }
    }
}

} // namespace gpusched
