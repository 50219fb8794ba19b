#include <gpusched/gpu/fallback_inventory.hpp>

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <string_view>
#include <memory>

namespace gpusched::gpu {
namespace {

// The few parts of the driver API's stable C ABI used here (cuda.h since CUDA 11.4 declares
// them so), declared here so that this file needs no toolkit; libcuda.so.1 is found at run time.
using CuResult = int;
constexpr CuResult k_cuda_success = 0;
using CuDevice = int;
struct CuUuid {
    unsigned char bytes[16];
};

struct Driver {
    void* handle = nullptr;
    CuResult (*init)(unsigned int) = nullptr;
    CuResult (*error_string)(CuResult, const char**) = nullptr;
    CuResult (*count)(int*) = nullptr;
    CuResult (*get)(CuDevice*, int) = nullptr;
    CuResult (*name)(char*, int, CuDevice) = nullptr;
    CuResult (*total_memory)(std::size_t*, CuDevice) = nullptr;
    CuResult (*uuid)(CuUuid*, CuDevice) = nullptr;
    CuResult (*pci_bus_id)(char*, int, CuDevice) = nullptr;

    Driver() = default;
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;
    ~Driver()
    {
        if (handle != nullptr) {
            dlclose(handle);
        }
    }

    std::string error(const char* call, CuResult code) const
    {
        const char* text = nullptr;
        if (error_string == nullptr || error_string(code, &text) != k_cuda_success ||
            text == nullptr) {
            return fmt::format("{}: CUDA driver error {}", call, code);
        }
        return fmt::format("{}: {}", call, text);
    }
};

template <class Function>
bool bind(void* handle, Function& function, const char* name)
{
    function = reinterpret_cast<Function>(dlsym(handle, name));
    return function != nullptr;
}

std::string load(Driver& driver)
{
    driver.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver.handle == nullptr) {
        return fmt::format("the CUDA driver is unavailable: {}", dlerror());
    }
    void* const handle = driver.handle;
    const bool bound = bind(handle, driver.init, "cuInit") &&
                       bind(handle, driver.error_string, "cuGetErrorString") &&
                       bind(handle, driver.count, "cuDeviceGetCount") &&
                       bind(handle, driver.get, "cuDeviceGet") &&
                       bind(handle, driver.name, "cuDeviceGetName") &&
                       bind(handle, driver.total_memory, "cuDeviceTotalMem_v2") &&
                       (bind(handle, driver.uuid, "cuDeviceGetUuid_v2") ||
                        bind(handle, driver.uuid, "cuDeviceGetUuid")) &&
                       bind(handle, driver.pci_bus_id, "cuDeviceGetPCIBusId");
    if (!bound) {
        return "the CUDA driver is unavailable: libcuda.so.1 lacks a function gpusched needs";
    }
    if (const CuResult code = driver.init(0); code != k_cuda_success) {
        return driver.error("cuInit", code);
    }
    return {};
}

struct Found {
    std::string pci_bus_id;
    GpuInfo gpu;
};

std::string read_device(const Driver& driver, int ordinal, Found& found)
{
    CuDevice device = 0;
    if (const CuResult code = driver.get(&device, ordinal); code != k_cuda_success) {
        return driver.error(fmt::format("cuDeviceGet({})", ordinal).c_str(), code);
    }
    std::array<char, 256> name{};
    std::array<char, 64> bus_id{};
    std::size_t memory = 0;
    CuUuid uuid{};
    CuResult code = driver.name(name.data(), static_cast<int>(name.size()), device);
    const char* call = "cuDeviceGetName";
    if (code == k_cuda_success) {
        code = driver.total_memory(&memory, device);
        call = "cuDeviceTotalMem";
    }
    if (code == k_cuda_success) {
        code = driver.uuid(&uuid, device);
        call = "cuDeviceGetUuid";
    }
    if (code == k_cuda_success) {
        code = driver.pci_bus_id(bus_id.data(), static_cast<int>(bus_id.size()), device);
        call = "cuDeviceGetPCIBusId";
    }
    if (code != k_cuda_success) {
        return driver.error(fmt::format("{}({})", call, ordinal).c_str(), code);
    }
    found.pci_bus_id = bus_id.data();
    found.gpu = GpuInfo{ordinal, format_gpu_uuid(uuid.bytes), name.data(), memory};
    return {};
}

bool pci_order_asked()
{
    const char* order = std::getenv("CUDA_DEVICE_ORDER");
    return order == nullptr || std::string_view(order) == "PCI_BUS_ID";
}

} // namespace

GpuInventory driver_api_inventory()
{
    Driver driver;
    if (auto problem = load(driver); !problem.empty()) {
        return {{}, std::move(problem)};
    }
    int count = 0;
    if (const CuResult code = driver.count(&count); code != k_cuda_success) {
        return {{}, driver.error("cuDeviceGetCount", code)};
    }
    std::vector<Found> devices(static_cast<std::size_t>(std::max(count, 0)));
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        if (auto problem = read_device(driver, ordinal, devices[static_cast<std::size_t>(ordinal)]);
            !problem.empty()) {
            return {{}, std::move(problem)};
        }
    }
    // The driver orders its devices as CUDA_DEVICE_ORDER says, as it does for the runtime and
    // for the jobs; sorting by PCI bus id when that is the order asked for (gpusched asks for
    // it unless the user chose another) keeps GPU N nvidia-smi's GPU N even with a driver that
    // would not.
    if (pci_order_asked()) {
        std::stable_sort(devices.begin(), devices.end(), [](const Found& a, const Found& b) {
            return a.pci_bus_id < b.pci_bus_id;
        });
    }
    GpuInventory inventory;
    inventory.source = k_source_driver_api;
    for (std::size_t index = 0; index < devices.size(); ++index) {
        devices[index].gpu.index = static_cast<int>(index);
        inventory.gpus.push_back(std::move(devices[index].gpu));
    }
    return inventory;
}

} // namespace gpusched::gpu
