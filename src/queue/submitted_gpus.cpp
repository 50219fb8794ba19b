#include <gpusched/queue/submitted_gpus.hpp>

#include <gpusched/gpu_list.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <variant>

namespace gpusched::queue {
namespace {

std::optional<std::string> value_of(const std::vector<std::string>& environment,
                                    std::string_view name)
{
    for (const auto& variable : environment) {
        if (variable.size() > name.size() && variable.starts_with(name) &&
            variable[name.size()] == '=') {
            return variable.substr(name.size() + 1);
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> gpus_named_by(const std::vector<std::string>& environment)
{
    // As a worker started with this environment would read them: GPUSCHED_GPUS (ranges
    // allowed), else CUDA_VISIBLE_DEVICES. A value it would refuse names nothing here.
    if (const auto gpus = value_of(environment, "GPUSCHED_GPUS")) {
        const auto parsed = parse_gpu_list({*gpus}, "GPUSCHED_GPUS");
        if (const auto* ids = std::get_if<std::vector<std::string>>(&parsed)) {
            return fmt::format("{}", fmt::join(*ids, ","));
        }
        return std::nullopt;
    }
    if (const auto visible = value_of(environment, "CUDA_VISIBLE_DEVICES")) {
        const auto parsed = parse_visible_devices(*visible);
        if (const auto* ids = std::get_if<std::vector<std::string>>(&parsed)) {
            return fmt::format("{}", fmt::join(*ids, ","));
        }
    }
    return std::nullopt;
}

std::optional<std::string> other_gpus_warning(const std::string& named, const std::string& queue,
                                              const std::vector<WorkerRecord>& workers)
{
    if (workers.empty() || std::any_of(workers.begin(), workers.end(), [&](const auto& worker) {
            return worker.gpus == named || worker.gpus.empty(); // empty: not said yet
        })) {
        return std::nullopt;
    }
    std::vector<std::string> serving;
    for (const auto& worker : workers) {
        serving.push_back(fmt::format("{} ({}{})", worker.gpus,
                                      worker.host.empty() ? "" : worker.host + ", ",
                                      fmt::format("pid {}", worker.pid)));
    }
    return fmt::format("GPUs {} named here, but queue {} is served on GPUs {}: its jobs run "
                       "there (`gpusched worker --gpus {}` serves it on those too)",
                       named, queue, fmt::join(serving, "; "), named);
}

} // namespace gpusched::queue
