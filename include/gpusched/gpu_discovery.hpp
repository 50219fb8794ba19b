#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// One GPU as CUDA sees it with CUDA_DEVICE_ORDER=PCI_BUS_ID, so `index` is nvidia-smi's.
struct GpuInfo {
    int index = 0;
    std::string uuid; // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    std::string name;
    std::uint64_t total_memory = 0; // bytes
    bool mig_enabled{};             // its work goes to its MIG instances, not to itself
};

// A MIG instance (a compute instance of a GPU instance) of a GPU whose MIG mode is enabled, as
// NVML lists it. CUDA selects it by its UUID: CUDA_VISIBLE_DEVICES=MIG-<uuid>.
struct MigInfo {
    std::string uuid;        // MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    int parent_index = 0;    // the GPU it is a part of, numbered as GpuInfo::index
    std::string parent_uuid; // GPU-...
    int device = 0;          // its place among its GPU's instances, nvidia-smi -L's "Device N"
    unsigned gpu_instance = 0;
    unsigned compute_instance = 0;
    std::string name;
    std::uint64_t total_memory = 0; // bytes
};

// The ways the probe lists GPUs, tried in this order: the CUDA runtime; where the driver is
// older than that runtime, the driver's own API; where that fails too, NVML.
inline constexpr std::string_view k_source_cuda_runtime = "CUDA runtime";
inline constexpr std::string_view k_source_driver_api = "CUDA driver API";
inline constexpr std::string_view k_source_nvml = "NVML";

// What the CUDA probe found: the GPUs, or why there are none.
struct GpuInventory {
    std::vector<GpuInfo> gpus;
    std::string problem; // empty when the probe ran; else why no GPU could be listed
    std::string source{}; // which way answered, a k_source_ name; {} lets {gpus, problem} omit it
    std::vector<MigInfo> migs{}; // the MIG instances of the GPUs with MIG enabled (from NVML)
};

// The MIG instance `id` names (its whole UUID, the start of it as CUDA takes it, or the form
// MIG-GPU-<uuid>/<gi>/<ci> of drivers before R470); nothing when none or several match.
const MigInfo* find_mig(const GpuInventory& inventory, std::string_view id);
// The GPU `id` names: its index or its whole UUID; nothing when none.
const GpuInfo* find_gpu(const GpuInventory& inventory, std::string_view id);

// Lists the GPUs of this machine. The real one runs the CUDA runtime in a short-lived child
// process; tests use a fake, since a GPU is hardware that may be absent.
class GpuProbe {
public:
    virtual ~GpuProbe() = default;
    virtual GpuInventory inventory() = 0;
};

// The GPU ids the user gave, checked, by precedence: --gpus tokens (their source named
// `gpus_source` in errors); else the entries of the scheduler's own CUDA_VISIBLE_DEVICES;
// nullopt when neither is set. Commands check them before they make anything (a FIFO, a lock
// file, a probe child), so a bad id leaves nothing behind.
Result<std::optional<std::vector<std::string>>>
given_gpu_ids(const std::vector<std::string>& gpus_option,
              const std::optional<std::string>& visible_devices,
              std::string_view gpus_source = "--gpus");

// The GPU ids jobs are given: those given_gpu_ids finds; else every GPU the probe finds, which is
// asked only then, or to turn indices into UUIDs when `use_uuids` (--uuid). A GPU whose MIG
// mode is enabled runs no CUDA work of its own: its MIG instances (MIG-<uuid>) take its place.
// No GPU at all is an error that says how to pass --gpus.
Result<std::vector<std::string>> resolve_gpu_ids(const std::vector<std::string>& gpus_option,
                                                 const std::optional<std::string>& visible_devices,
                                                 GpuProbe& probe, bool use_uuids = false);

// The probe's report, "via\tSOURCE" then one GPU per line ("INDEX\tUUID\tTOTAL_BYTES\tNAME"),
// then "mig-mode\tINDEX" for each GPU with MIG enabled and one line per MIG instance
// ("mig\tPARENT_INDEX\tPARENT_UUID\tDEVICE\tGI\tCI\tUUID\tTOTAL_BYTES\tNAME"), or "error: WHY";
// and its reading back, which turns anything else into a problem.
std::string format_inventory(const GpuInventory& inventory);
GpuInventory parse_inventory(std::string_view text);

// "GPU-8e6b0c3a-2f1d-4c55-9f0e-0123456789ab" from the 16 bytes CUDA and NVML share.
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

} // namespace gpusched
