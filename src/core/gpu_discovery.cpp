#include <gpusched/gpu_discovery.hpp>

#include <gpusched/gpu_list.hpp>

#include <fmt/format.h>

namespace gpusched {

Parsed<std::vector<std::string>> resolve_gpu_ids(const std::vector<std::string>& gpus_option,
                                                 const std::optional<std::string>& visible_devices,
                                                 GpuProbe& probe)
{
    if (!gpus_option.empty()) {
        return parse_gpu_list(gpus_option);
    }
    if (visible_devices) {
        return parse_visible_devices(*visible_devices);
    }
    const DeviceCount found = probe.count_devices();
    if (found.count <= 0) {
        const std::string why = found.problem.empty() ? "CUDA reports no device" : found.problem;
        return ParseError{fmt::format(
            "no GPU found ({}); name the GPUs to use with --gpus, e.g. --gpus 0,1 or --gpus 0-3",
            why)};
    }
    std::vector<std::string> ids;
    for (int index = 0; index < found.count; ++index) {
        ids.push_back(std::to_string(index));
    }
    return ids;
}

} // namespace gpusched
