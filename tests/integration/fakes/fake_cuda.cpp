// A fake libcuda.so.1: the driver API as cuda.h declares it, answering from the machine that
// fake_gpu_config.hpp describes. The CUDA runtime linked into gpusched loads it through
// LD_LIBRARY_PATH as it would load the driver's, so a driver_version below the runtime's makes
// the runtime refuse exactly as an old driver does.
#include "fake_gpu_config.hpp"

// The unversioned names (cuDeviceGetUuid, cuGetProcAddress) are symbols of their own, which
// cuda.h hides behind macros unless asked for them this way.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

using fake_gpu::fails;
using fake_gpu::read_config;

namespace {

bool initialised = false;

// The GPUs as this process numbers them: in PCI order only when asked, as the driver does.
std::vector<fake_gpu::Gpu> devices()
{
    const auto config = read_config();
    const char* order = std::getenv("CUDA_DEVICE_ORDER");
    return order != nullptr && std::string_view(order) == "PCI_BUS_ID"
               ? fake_gpu::in_pci_order(config)
               : config.gpus;
}

CUresult check(const char* function)
{
    if (fails(read_config(), function)) {
        return CUDA_ERROR_UNKNOWN;
    }
    return initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

bool valid(CUdevice device)
{
    return device >= 0 && static_cast<std::size_t>(device) < devices().size();
}

} // namespace

extern "C" {

CUresult cuInit(unsigned int)
{
    if (fails(read_config(), "cuInit")) {
        return CUDA_ERROR_UNKNOWN;
    }
    initialised = true;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version)
{
    if (version == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const auto config = read_config();
    if (fails(config, "cuDriverGetVersion")) {
        return CUDA_ERROR_UNKNOWN;
    }
    *version = config.driver_version;
    return CUDA_SUCCESS;
}

// A driver resolves the runtime's entry points here; this one has only the few above and
// below, so a runtime that needs more is told they are not there and fails cleanly.
CUresult cuGetProcAddress_v2(const char* symbol, void** function, int, cuuint64_t,
                             CUdriverProcAddressQueryResult* status)
{
    const std::string_view name = symbol != nullptr ? symbol : "";
    void* found = nullptr;
    if (name == "cuInit") {
        found = reinterpret_cast<void*>(&cuInit);
    } else if (name == "cuDriverGetVersion") {
        found = reinterpret_cast<void*>(&cuDriverGetVersion);
    } else if (name == "cuGetProcAddress") {
        found = reinterpret_cast<void*>(&cuGetProcAddress_v2);
    }
    if (function != nullptr) {
        *function = found;
    }
    if (status != nullptr) {
        *status = found != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS
                                   : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char* symbol, void** function, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, function, version, flags, nullptr);
}

CUresult cuGetErrorString(CUresult error, const char** text)
{
    if (text == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *text = error == CUDA_ERROR_NOT_INITIALIZED ? "initialization error"
            : error == CUDA_ERROR_INVALID_DEVICE ? "invalid device ordinal"
                                                 : "unknown error";
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count)
{
    if (const CUresult error = check("cuDeviceGetCount"); error != CUDA_SUCCESS) {
        return error;
    }
    *count = static_cast<int>(devices().size());
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal)
{
    if (const CUresult error = check("cuDeviceGet"); error != CUDA_SUCCESS) {
        return error;
    }
    if (!valid(ordinal)) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device)
{
    if (const CUresult error = check("cuDeviceGetName"); error != CUDA_SUCCESS) {
        return error;
    }
    if (!valid(device) || length <= 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    const auto text = devices()[static_cast<std::size_t>(device)].name;
    std::strncpy(name, text.c_str(), static_cast<std::size_t>(length) - 1);
    name[length - 1] = '\0';
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device)
{
    if (const CUresult error = check("cuDeviceTotalMem_v2"); error != CUDA_SUCCESS) {
        return error;
    }
    if (!valid(device)) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *bytes = devices()[static_cast<std::size_t>(device)].total_mib * 1024 * 1024;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device)
{
    if (const CUresult error = check("cuDeviceGetUuid_v2"); error != CUDA_SUCCESS) {
        return error;
    }
    if (!valid(device)) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    fake_gpu::uuid_bytes(devices()[static_cast<std::size_t>(device)].uuid, uuid->bytes);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device)
{
    return cuDeviceGetUuid_v2(uuid, device);
}

CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device)
{
    if (const CUresult error = check("cuDeviceGetPCIBusId"); error != CUDA_SUCCESS) {
        return error;
    }
    if (!valid(device) || length <= 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    const auto text = devices()[static_cast<std::size_t>(device)].pci_bus_id;
    std::strncpy(bus_id, text.c_str(), static_cast<std::size_t>(length) - 1);
    bus_id[length - 1] = '\0';
    return CUDA_SUCCESS;
}

} // extern "C"
