#include <gpusched/job_environment.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace gpusched {
namespace {

constexpr std::array<std::string_view, 4> k_per_job_names = {
    "CUDA_VISIBLE_DEVICES", "GPUSCHED_JOB_ID", "GPUSCHED_GPU", "GPUSCHED_RUN"};

bool has_name(std::string_view entry, std::string_view name)
{
    return entry.size() > name.size() && entry.substr(0, name.size()) == name &&
           entry[name.size()] == '=';
}

} // namespace

JobEnvironment::JobEnvironment(const char* const* variables, std::string_view run_token)
{
    bool has_device_order = false;
    for (auto entry = variables; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string_view variable = *entry;
        const bool per_job = std::any_of(k_per_job_names.begin(), k_per_job_names.end(),
                                         [&](auto name) { return has_name(variable, name); });
        if (per_job) {
            continue;
        }
        has_device_order = has_device_order || has_name(variable, "CUDA_DEVICE_ORDER");
        m_base.emplace_back(variable);
    }
    if (!has_device_order) {
        m_base.emplace_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
    }
    if (!run_token.empty()) {
        m_base.push_back(fmt::format("GPUSCHED_RUN={}", run_token));
    }
}

JobEnvironment JobEnvironment::for_submitted(const std::vector<std::string>& submitted,
                                             bool whole) const
{
    const auto ours = [](std::string_view variable) {
        return variable.starts_with("GPUSCHED_") || has_name(variable, "CUDA_VISIBLE_DEVICES") ||
               has_name(variable, "CUDA_DEVICE_ORDER");
    };
    JobEnvironment job;
    job.m_base.reserve(submitted.size() + 4);
    for (const auto& variable : submitted) {
        if (!ours(variable) && variable.find('=') != std::string::npos) {
            job.m_base.push_back(variable);
        }
    }
    const auto submitted_too = [&submitted](std::string_view variable) {
        const auto name = variable.substr(0, std::min(variable.find('='), variable.size()));
        return std::any_of(submitted.begin(), submitted.end(),
                           [&](const std::string& carried) { return has_name(carried, name); });
    };
    for (const auto& variable : m_base) {
        if (ours(variable) || (!whole && !submitted_too(variable))) {
            job.m_base.push_back(variable);
        }
    }
    return job;
}

std::vector<char*> JobEnvironment::for_job(JobId job, std::string_view gpu,
                                           JobVariables& storage) const
{
    storage[0] = fmt::format("CUDA_VISIBLE_DEVICES={}", gpu);
    storage[1] = fmt::format("GPUSCHED_JOB_ID={}", job);
    storage[2] = fmt::format("GPUSCHED_GPU={}", gpu);
    std::vector<char*> envp;
    envp.reserve(m_base.size() + storage.size() + 1);
    // execve takes char* const*, but never writes through it.
    for (const auto& entry : m_base) {
        envp.push_back(const_cast<char*>(entry.c_str()));
    }
    for (auto& entry : storage) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);
    return envp;
}

} // namespace gpusched
