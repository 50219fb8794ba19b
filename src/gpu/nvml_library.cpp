#include "nvml_library.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <initializer_list>

namespace gpusched::gpu::nvml {
namespace {

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

} // namespace

Library::~Library()
{
    if (shutdown != nullptr) {
        shutdown();
    }
    if (handle != nullptr) {
        dlclose(handle);
    }
}

std::string Library::error(Return code) const
{
    return error_string != nullptr ? error_string(code) : fmt::format("NVML error {}", code);
}

std::string load(Library& nvml)
{
    nvml.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml.handle == nullptr) {
        return fmt::format("NVML is unavailable: {}", dlerror());
    }
    void* const handle = nvml.handle;
    const bool bound =
        bind(handle, nvml.init, {"nvmlInit_v2", "nvmlInit"}) &&
        bind(handle, nvml.error_string, {"nvmlErrorString"}) &&
        bind(handle, nvml.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}) &&
        bind(handle, nvml.by_index,
             {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}) &&
        bind(handle, nvml.by_uuid, {"nvmlDeviceGetHandleByUUID"}) &&
        bind(handle, nvml.uuid, {"nvmlDeviceGetUUID"}) &&
        bind(handle, nvml.name, {"nvmlDeviceGetName"}) &&
        bind(handle, nvml.memory, {"nvmlDeviceGetMemoryInfo"}) &&
        bind(handle, nvml.processes,
             {"nvmlDeviceGetComputeRunningProcesses_v3",
              "nvmlDeviceGetComputeRunningProcesses_v2"});
    if (!bound) {
        return "NVML is unavailable: libnvidia-ml.so.1 lacks a function gpusched needs";
    }
    if (const Return code = nvml.init(); code != k_success) {
        return fmt::format("NVML is unavailable: nvmlInit: {}", nvml.error(code));
    }
    bind(handle, nvml.shutdown, {"nvmlShutdown"});
    bind(handle, nvml.mig_mode, {"nvmlDeviceGetMigMode"});
    bind(handle, nvml.max_mig_devices, {"nvmlDeviceGetMaxMigDeviceCount"});
    bind(handle, nvml.mig_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
    bind(handle, nvml.parent_of_mig, {"nvmlDeviceGetDeviceHandleFromMigDeviceHandle"});
    bind(handle, nvml.gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
    bind(handle, nvml.compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
    bind(handle, nvml.utilization, {"nvmlDeviceGetUtilizationRates"});
    bind(handle, nvml.temperature, {"nvmlDeviceGetTemperature"});
    return {};
}

} // namespace gpusched::gpu::nvml
