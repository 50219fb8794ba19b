#include <gpusched/job_request.hpp>

namespace gpusched {

std::size_t gpus_wanted(const JobRequest& request, const RunnerDefaults& defaults)
{
    return request.gpus.value_or(defaults.gpus);
}

bool can_ever_run(const JobRequest& request, std::size_t gpus, const RunnerDefaults& defaults)
{
    return gpus_wanted(request, defaults) <= gpus;
}

} // namespace gpusched
