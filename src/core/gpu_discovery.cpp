#include <gpusched/gpu_discovery.hpp>

#include <gpusched/gpu_list.hpp>
#include <gpusched/parse_number.hpp>
#include <gpusched/probe_protocol.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace gpusched {
namespace {

constexpr std::string_view k_source_prefix = "via\t";
constexpr std::string_view k_mig_mode_prefix = "mig-mode\t";
constexpr std::string_view k_mig_prefix = "mig\t";

Failure no_gpu(const std::string& why)
{
    return Failure{fmt::format(
        "no GPU found ({}); name the GPUs to use with --gpus, e.g. --gpus 0,1 or --gpus 0-3",
        why.empty() ? "CUDA reports no device" : why)};
}

// Replaces GPU indices by their UUIDs; other ids stay as they are.
Result<std::vector<std::string>> to_uuids(std::vector<std::string> ids, GpuProbe& probe)
{
    const auto found = probe.inventory();
    for (auto& id : ids) {
        const auto number = parse_number<int>(id);
        if (!number) {
            continue;
        }
        const int index = *number;
        if (!found.problem.empty()) {
            return Failure{fmt::format("--uuid: cannot list the GPUs: {}", found.problem)};
        }
        if (index < 0 || static_cast<std::size_t>(index) >= found.gpus.size()) {
            return Failure{
                fmt::format("--uuid: there is no GPU {}; CUDA finds {}", id, found.gpus.size())};
        }
        id = found.gpus[static_cast<std::size_t>(index)].uuid;
    }
    return ids;
}

// Reads a "mig\t..." line (without its prefix) into `mig`.
bool parse_mig(std::string_view line, MigInfo& mig)
{
    const auto fields = split(line, '\t');
    if (fields.size() != 8) {
        return false;
    }
    const auto parent = parse_number<int>(fields[0]);
    const auto device = parse_number<int>(fields[2]);
    const auto gpu_instance = parse_number<unsigned>(fields[3]);
    const auto compute_instance = parse_number<unsigned>(fields[4]);
    const auto memory = parse_number<std::uint64_t>(fields[6]);
    if (!parent || !device || !gpu_instance || !compute_instance || !memory) {
        return false;
    }
    mig.uuid = fields[5];
    mig.parent_index = *parent;
    mig.parent_uuid = fields[1];
    mig.device = *device;
    mig.gpu_instance = *gpu_instance;
    mig.compute_instance = *compute_instance;
    mig.name = fields[7];
    mig.total_memory = *memory;
    return true;
}

bool is_mig_of(const MigInfo& mig, std::string_view id)
{
    if (id.starts_with("MIG-GPU-")) {
        // MIG-GPU-<uuid>/<gi>/<ci>, or the start of the GPU's UUID alone
        return id == fmt::format("MIG-{}/{}/{}", mig.parent_uuid, mig.gpu_instance,
                                 mig.compute_instance) ||
               (id.find('/') == std::string_view::npos &&
                std::string_view(mig.parent_uuid).starts_with(id.substr(4)));
    }
    return id.starts_with("MIG-") && std::string_view(mig.uuid).starts_with(id);
}

} // namespace

const GpuInfo* find_gpu(const GpuInventory& inventory, std::string_view id)
{
    for (const auto& gpu : inventory.gpus) {
        if (gpu.uuid == id || std::to_string(gpu.index) == id) {
            return &gpu;
        }
    }
    return nullptr;
}

const MigInfo* find_mig(const GpuInventory& inventory, std::string_view id)
{
    const MigInfo* found = nullptr;
    for (const auto& mig : inventory.migs) {
        if (mig.uuid == id) {
            return &mig;
        }
        if (is_mig_of(mig, id)) {
            if (found != nullptr) {
                return nullptr; // CUDA would not know which either
            }
            found = &mig;
        }
    }
    return found;
}

Result<std::optional<std::vector<std::string>>>
given_gpu_ids(const std::vector<std::string>& gpus_option,
              const std::optional<std::string>& visible_devices, std::string_view gpus_source)
{
    if (gpus_option.empty() && !visible_devices) {
        return std::optional<std::vector<std::string>>{};
    }
    auto ids = !gpus_option.empty() ? parse_gpu_list(gpus_option, gpus_source)
                                    : parse_visible_devices(*visible_devices);
    if (!ids) {
        return ids.failure();
    }
    return std::optional(std::move(*ids));
}

Result<std::vector<std::string>> resolve_gpu_ids(const std::vector<std::string>& gpus_option,
                                                 const std::optional<std::string>& visible_devices,
                                                 GpuProbe& probe, bool use_uuids)
{
    auto given = given_gpu_ids(gpus_option, visible_devices);
    if (!given) {
        return given.failure();
    }
    if (auto& ids = *given) {
        // CUDA_VISIBLE_DEVICES is passed on as the scheduler got it, --uuid or not.
        if (!use_uuids || gpus_option.empty()) {
            return std::move(*ids);
        }
        return to_uuids(std::move(*ids), probe);
    }
    const GpuInventory found = probe.inventory();
    if (found.gpus.empty()) {
        return no_gpu(found.problem);
    }
    std::vector<std::string> ids;
    for (const auto& gpu : found.gpus) {
        if (!gpu.mig_enabled) {
            ids.push_back(use_uuids ? gpu.uuid : std::to_string(gpu.index));
            continue;
        }
        for (const auto& mig : found.migs) {
            if (mig.parent_uuid == gpu.uuid) {
                ids.push_back(mig.uuid);
            }
        }
    }
    if (ids.empty()) {
        return no_gpu("MIG is enabled on every GPU, and none has a MIG instance");
    }
    return ids;
}

std::string format_inventory(const GpuInventory& inventory)
{
    if (!inventory.problem.empty()) {
        return probe_error_line(inventory.problem);
    }
    std::string text = inventory.source.empty()
                           ? std::string()
                           : fmt::format("{}{}\n", k_source_prefix, inventory.source);
    for (const auto& gpu : inventory.gpus) {
        text += fmt::format("{}\t{}\t{}\t{}\n", gpu.index, gpu.uuid, gpu.total_memory, gpu.name);
    }
    for (const auto& gpu : inventory.gpus) {
        if (gpu.mig_enabled) {
            text += fmt::format("{}{}\n", k_mig_mode_prefix, gpu.index);
        }
    }
    for (const auto& mig : inventory.migs) {
        text += fmt::format("{}{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", k_mig_prefix, mig.parent_index,
                            mig.parent_uuid, mig.device, mig.gpu_instance, mig.compute_instance,
                            mig.uuid, mig.total_memory, mig.name);
    }
    return text;
}

GpuInventory parse_inventory(std::string_view text)
{
    GpuInventory inventory;
    if (auto why = probe_error(text)) {
        inventory.problem = std::move(*why);
        return inventory;
    }
    for (const auto line : split(text, '\n')) {
        if (line.empty()) {
            continue;
        }
        if (line.substr(0, k_source_prefix.size()) == k_source_prefix) {
            inventory.source = std::string(line.substr(k_source_prefix.size()));
            continue;
        }
        if (line.starts_with(k_mig_mode_prefix)) {
            const auto index = parse_number<int>(line.substr(k_mig_mode_prefix.size()));
            auto gpu = std::find_if(inventory.gpus.begin(), inventory.gpus.end(),
                                    [&](const GpuInfo& listed) { return index == listed.index; });
            if (gpu == inventory.gpus.end()) {
                return GpuInventory{{}, fmt::format("the GPU probe answered '{}'", line)};
            }
            gpu->mig_enabled = true;
            continue;
        }
        if (line.starts_with(k_mig_prefix)) {
            MigInfo mig;
            if (!parse_mig(line.substr(k_mig_prefix.size()), mig)) {
                return GpuInventory{{}, fmt::format("the GPU probe answered '{}'", line)};
            }
            inventory.migs.push_back(std::move(mig));
            continue;
        }
        const auto fields = split(line, '\t');
        const auto index = fields.size() == 4 ? parse_number<int>(fields[0]) : std::nullopt;
        const auto memory =
            fields.size() == 4 ? parse_number<std::uint64_t>(fields[2]) : std::nullopt;
        if (!index || !memory) {
            return GpuInventory{{}, fmt::format("the GPU probe answered '{}'", line)};
        }
        inventory.gpus.push_back(
            GpuInfo{*index, std::string(fields[1]), std::string(fields[3]), *memory});
    }
    return inventory;
}

std::string format_gpu_uuid(const unsigned char (&bytes)[16])
{
    std::string hex;
    for (const unsigned char byte : bytes) {
        hex += fmt::format("{:02x}", byte);
    }
    return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                       hex.substr(16, 4), hex.substr(20));
}

} // namespace gpusched
