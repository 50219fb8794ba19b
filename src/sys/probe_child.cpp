#include <gpusched/sys/probe_child.hpp>

#include <gpusched/gpu/cuda_probe.hpp>
#include <gpusched/gpu/nvml_usage.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <system_error>

namespace gpusched::sys {
namespace {

constexpr const char* k_self = "/proc/self/exe";

} // namespace

ProbeCommand cuda_probe_command(std::chrono::milliseconds timeout)
{
    return {k_self, {"gpusched", "__probe-cuda"}, timeout};
}

ProbeCommand usage_probe_command(std::chrono::milliseconds timeout)
{
    return {k_self, {"gpusched", "__probe-usage"}, timeout};
}

ProbeAnswer run_probe_child(const ProbeCommand& command, const std::vector<std::string>& ids,
                            SignalChannel& signals)
{
    std::optional<ProbeProcess> probe;
    try {
        probe.emplace(command, ids, signals.original_mask());
    } catch (const std::system_error& error) {
        return {{}, fmt::format("cannot start {}: {}", command.program, error.what())};
    }
    return wait_for_answer(*probe, signals);
}

GpuInventory CudaProbeChild::inventory()
{
    if (!m_answer) {
        const auto answer = run_probe_child(m_command, {}, m_signals);
        m_answer = answer.problem.empty() ? parse_inventory(answer.output)
                                          : GpuInventory{{}, answer.problem};
        if (m_answer->problem.empty()) {
            spdlog::debug("{} GPU{} listed through the {}", m_answer->gpus.size(),
                          m_answer->gpus.size() == 1 ? "" : "s", m_answer->source);
        }
    }
    return *m_answer;
}

UsageReport UsageProbeChild::usage(const std::vector<std::string>& ids)
{
    const auto answer = run_probe_child(m_command, ids, m_signals);
    return answer.problem.empty() ? parse_usage(answer.output) : UsageReport{{}, answer.problem};
}

int print_cuda_inventory()
{
    fmt::print("{}", format_inventory(gpu::inventory_in_this_process()));
    std::fflush(stdout);
    return 0;
}

int print_gpu_usage(const std::vector<std::string>& ids)
{
    fmt::print("{}", format_usage(gpu::nvml_usage(ids)));
    std::fflush(stdout);
    return 0;
}

} // namespace gpusched::sys
