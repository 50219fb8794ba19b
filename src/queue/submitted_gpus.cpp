#include <gpusched/queue/submitted_gpus.hpp>

#include <gpusched/gpu_list.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
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

std::set<std::string> ids_of(const std::string& gpus)
{
    std::set<std::string> ids;
    for (const auto id : split(gpus, ',')) {
        if (!id.empty()) {
            ids.emplace(id);
        }
    }
    return ids;
}

} // namespace

std::optional<std::string> too_few_gpus_warning(const JobRequest& request, const std::string& queue,
                                                const std::vector<WorkerRecord>& workers)
{
    std::size_t most = 0;
    for (const auto& worker : workers) {
        if (worker.gpus.empty()) {
            return std::nullopt; // not said yet
        }
        const auto count = ids_of(worker.gpus).size();
        if (can_ever_run(request, count, {})) {
            return std::nullopt;
        }
        most = std::max(most, count);
    }
    if (workers.empty()) {
        return std::nullopt;
    }
    const auto asked = gpus_wanted(request, {});
    return fmt::format("the jobs ask for {} GPUs each, but the workers of queue {} have at most "
                       "{}: they wait for a worker with {} (`gpusched worker --update --gpus ...`)",
                       asked, queue, most, asked);
}

std::optional<std::string> gpus_named_by(const std::vector<std::string>& environment)
{
    // As a worker started with this environment would read them: GPUSCHED_GPUS (ranges
    // allowed), else CUDA_VISIBLE_DEVICES. A value it would refuse names nothing here.
    if (const auto gpus = value_of(environment, "GPUSCHED_GPUS")) {
        const auto parsed = parse_gpu_list({*gpus}, "GPUSCHED_GPUS");
        if (parsed) {
            return fmt::format("{}", fmt::join(*parsed, ","));
        }
        return std::nullopt;
    }
    if (const auto visible = value_of(environment, "CUDA_VISIBLE_DEVICES")) {
        const auto parsed = parse_visible_devices(*visible);
        if (parsed) {
            return fmt::format("{}", fmt::join(*parsed, ","));
        }
    }
    return std::nullopt;
}

std::optional<std::string> other_gpus_warning(const std::string& named, const std::string& queue,
                                              const std::vector<WorkerRecord>& workers)
{
    // Named GPUs a worker runs on, in any order: their jobs may run there.
    const auto wanted = ids_of(named);
    const auto runs_on_them = [&](const WorkerRecord& worker) {
        const auto has = ids_of(worker.gpus);
        return worker.gpus.empty() || // not said yet
               std::all_of(wanted.begin(), wanted.end(),
                           [&](const auto& id) { return has.contains(id); });
    };
    if (workers.empty() || std::any_of(workers.begin(), workers.end(), runs_on_them)) {
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
