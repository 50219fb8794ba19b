#include <gpusched/gpu/nvml_usage.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <dlfcn.h>

#include <memory>
#include <vector>

namespace gpusched::gpu {
namespace {

// The few parts of NVML's stable C ABI used here, declared so that no NVML header or library
// is needed to build; the library is found at run time.
using NvmlReturn = int;
constexpr NvmlReturn k_nvml_success = 0;
constexpr NvmlReturn k_nvml_insufficient_size = 7;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
// nvmlProcessInfo_t as the _v2 and _v3 calls fill it.
struct NvmlProcessInfo {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};

struct Library {
    void* handle = nullptr;
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    const char* (*error_string)(NvmlReturn) = nullptr;
    NvmlReturn (*by_index)(unsigned int, NvmlDevice*) = nullptr;
    NvmlReturn (*by_uuid)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
    NvmlReturn (*processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) = nullptr;

    ~Library()
    {
        if (shutdown != nullptr) {
            shutdown();
        }
        if (handle != nullptr) {
            dlclose(handle);
        }
    }

    std::string error(NvmlReturn code) const
    {
        return error_string != nullptr ? error_string(code) : fmt::format("NVML error {}", code);
    }
};

template <class Function>
bool bind(void* handle, Function& function, std::initializer_list<const char*> names)
{
    for (const char* name : names) {
        if (void* symbol = dlsym(handle, name)) {
            function = reinterpret_cast<Function>(symbol);
            return true;
        }
    }
    return false;
}

std::string load(Library& nvml)
{
    nvml.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml.handle == nullptr) {
        return fmt::format("NVML is unavailable: {}", dlerror());
    }
    const bool bound = bind(nvml.handle, nvml.init, {"nvmlInit_v2", "nvmlInit"}) &&
                       bind(nvml.handle, nvml.error_string, {"nvmlErrorString"}) &&
                       bind(nvml.handle, nvml.by_index,
                            {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}) &&
                       bind(nvml.handle, nvml.by_uuid, {"nvmlDeviceGetHandleByUUID"}) &&
                       bind(nvml.handle, nvml.memory, {"nvmlDeviceGetMemoryInfo"}) &&
                       bind(nvml.handle, nvml.processes,
                            {"nvmlDeviceGetComputeRunningProcesses_v3",
                             "nvmlDeviceGetComputeRunningProcesses_v2"});
    if (!bound) {
        return "NVML is unavailable: libnvidia-ml.so.1 lacks a function gpusched needs";
    }
    if (const NvmlReturn code = nvml.init(); code != k_nvml_success) {
        return fmt::format("NVML is unavailable: nvmlInit: {}", nvml.error(code));
    }
    bind(nvml.handle, nvml.shutdown, {"nvmlShutdown"});
    return {};
}

std::string read_usage(const Library& nvml, const std::string& id, GpuUsage& usage)
{
    NvmlDevice device = nullptr;
    const auto index = parse_number<unsigned int>(id);
    const NvmlReturn found =
        index ? nvml.by_index(*index, &device) : nvml.by_uuid(id.c_str(), &device);
    if (found != k_nvml_success) {
        return fmt::format("GPU {}: {}", id, nvml.error(found));
    }
    NvmlMemory memory{};
    if (const NvmlReturn code = nvml.memory(device, &memory); code != k_nvml_success) {
        return fmt::format("GPU {}: memory: {}", id, nvml.error(code));
    }
    usage.used_memory = memory.used;
    usage.total_memory = memory.total;
    std::vector<NvmlProcessInfo> processes(16);
    while (true) {
        auto count = static_cast<unsigned int>(processes.size());
        const NvmlReturn code = nvml.processes(device, &count, processes.data());
        if (code == k_nvml_insufficient_size) {
            processes.resize(count + 16u);
            continue;
        }
        if (code != k_nvml_success) {
            return fmt::format("GPU {}: processes: {}", id, nvml.error(code));
        }
        for (unsigned int i = 0; i < count; ++i) {
            usage.compute_pids.push_back(static_cast<int>(processes[i].pid));
        }
        return {};
    }
}

} // namespace

UsageReport nvml_usage(const std::vector<std::string>& ids)
{
    Library nvml;
    if (auto problem = load(nvml); !problem.empty()) {
        return UsageReport{{}, std::move(problem)};
    }
    UsageReport report;
    for (const auto& id : ids) {
        GpuUsage usage;
        if (auto problem = read_usage(nvml, id, usage); !problem.empty()) {
            return UsageReport{{}, std::move(problem)};
        }
        report.gpus.emplace(id, std::move(usage));
    }
    return report;
}

} // namespace gpusched::gpu
