#pragma once

#include <gpusched/scheduler.hpp>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// The environment every job starts with: the scheduler's own, minus the variables gpusched
// sets per job, plus CUDA_DEVICE_ORDER=PCI_BUS_ID unless the user chose an order, so GPU N
// is the GPU that nvidia-smi calls N. Built once; each job adds its own three variables, and
// the scheduler's environment is never modified (no setenv between spawns).
class JobEnvironment {
public:
    // `variables` is a null-terminated array of NAME=VALUE strings, as in environ(7).
    // `run_token`, when given, becomes GPUSCHED_RUN in every job's environment: what a job
    // starts inherits it, so the run guard can tell the run's processes (RunGuard).
    explicit JobEnvironment(const char* const* variables, std::string_view run_token = {});

    // Storage for one job's own variables; it must outlive the envp built from it.
    using JobVariables = std::array<std::string, 3>;

    // A null-terminated envp for `job` running on `gpu`.
    std::vector<char*> for_job(JobId job, std::string_view gpu, JobVariables& storage) const;

    // The environment of a job submitted with `submitted` (a queued job): the submitter's
    // variables, but for those gpusched sets (GPUSCHED_*, CUDA_VISIBLE_DEVICES), which are
    // ours, and CUDA_DEVICE_ORDER, ours too, since our GPU ids count in our order. Where
    // `submitted` is not the submitter's whole environment (only the variables it chose to
    // carry), they are set over the worker's own.
    JobEnvironment for_submitted(const std::vector<std::string>& submitted,
                                 bool whole = true) const;

    const std::vector<std::string>& base() const { return m_base; }

private:
    JobEnvironment() = default;

    std::vector<std::string> m_base;
};

} // namespace gpusched
