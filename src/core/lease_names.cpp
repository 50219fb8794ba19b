#include <gpusched/lease_names.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace gpusched {
namespace {

constexpr std::string_view k_record_suffix = ".record";
constexpr std::string_view k_space_prefix = "gpusched-lease/";
// Never written by encode(), so a hashed name cannot read back as a key.
constexpr char k_hashed_mark = '~';

bool kept_as_is(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

std::optional<int> hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return std::nullopt; // lower case is never written, so it never reads back
}

std::string encode(std::string_view key)
{
    std::string encoded;
    encoded.reserve(key.size());
    for (const char c : key) {
        if (kept_as_is(c)) {
            encoded += c;
        } else {
            encoded += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        }
    }
    return encoded;
}

std::optional<std::string> decode(std::string_view encoded)
{
    if (encoded.empty()) {
        return std::nullopt;
    }
    std::string key;
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        if (kept_as_is(encoded[i])) {
            key += encoded[i];
            continue;
        }
        if (encoded[i] != '%' || i + 2 >= encoded.size()) {
            return std::nullopt;
        }
        const auto high = hex_digit(encoded[i + 1]);
        const auto low = hex_digit(encoded[i + 2]);
        const auto c = static_cast<char>(high.value_or(0) * 16 + low.value_or(0));
        if (!high || !low || kept_as_is(c)) {
            return std::nullopt; // not how the name would have been written
        }
        key += c;
        i += 2;
    }
    return key;
}

// FNV-1a: stable across builds and machines, which std::hash is not. Names only need to
// differ, not to resist anyone: whoever could aim a collision can take the lease anyway.
std::uint64_t stable_hash(std::string_view text)
{
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

std::optional<int> as_index(const std::string& id)
{
    const auto index = parse_number<int>(id);
    return index && *index >= 0 ? index : std::nullopt;
}

} // namespace

std::string lease_space(std::string_view lock_directory)
{
    return fmt::format("{}{:016x}/", k_space_prefix, stable_hash(lock_directory));
}

std::string worker_space(std::string_view database)
{
    return fmt::format("gpusched-worker/{:016x}/", stable_hash(database));
}

std::string lease_socket_name(std::string_view space, std::string_view key)
{
    auto name = std::string(space) + encode(key);
    if (name.size() > k_longest_socket_name) {
        const auto hash = fmt::format("{}{:016x}", k_hashed_mark, stable_hash(key));
        name.resize(k_longest_socket_name - hash.size());
        name += hash;
    }
    return name;
}

std::string lease_wait_prefix(std::string_view space)
{
    return std::string(space) + "wait/";
}

std::string lease_wait_name(std::string_view space, const LeaseWaitName& wait)
{
    return fmt::format("{}{}/{}/{}", lease_wait_prefix(space), wait.pid, wait.since, wait.gpus);
}

std::optional<LeaseWaitName> parse_lease_wait_name(std::string_view space, std::string_view name)
{
    const auto prefix = lease_wait_prefix(space);
    if (!name.starts_with(prefix)) {
        return std::nullopt;
    }
    name.remove_prefix(prefix.size());
    LeaseWaitName wait;
    const auto field = [&name](auto& value) {
        const auto end = name.find('/');
        const auto text = name.substr(0, end);
        const auto [rest, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        name.remove_prefix(end == std::string_view::npos ? name.size() : end + 1);
        return error == std::errc{} && rest == text.data() + text.size() && !text.empty();
    };
    if (!field(wait.pid) || !field(wait.since) || !field(wait.gpus) || !name.empty()) {
        return std::nullopt;
    }
    return wait;
}

std::optional<std::string> lease_key_of_socket_name(std::string_view space, std::string_view name)
{
    if (!name.starts_with(space)) {
        return std::nullopt;
    }
    return decode(name.substr(space.size()));
}

std::string lease_record_file_name(std::string_view key)
{
    return encode(key) + std::string(k_record_suffix);
}

std::string lease_share_name(std::string_view space, std::string_view parent_key,
                             std::string_view key)
{
    return fmt::format("{}{}/{:016x}", space, encode(parent_key), stable_hash(key));
}

std::string lease_shares_prefix(std::string_view space, std::string_view key)
{
    return std::string(space) + encode(key);
}

bool is_lease_share(std::string_view space, std::string_view name)
{
    return name.starts_with(space) && name.find('/', space.size()) != std::string_view::npos;
}

std::string lease_memory_shares_prefix(std::string_view space, std::string_view key)
{
    return std::string(space) + encode(key) + "/m";
}

std::optional<std::string> lease_memory_share_name(std::string_view space, std::string_view key,
                                                   const MemoryShareName& share)
{
    auto name = fmt::format("{}{}.{}.{}", lease_memory_shares_prefix(space, key), share.pid,
                            share.job, share.mib);
    if (name.size() > k_longest_socket_name) {
        return std::nullopt;
    }
    return name;
}

std::optional<MemoryShareName> parse_lease_memory_share(std::string_view prefix,
                                                        std::string_view name)
{
    if (!name.starts_with(prefix)) {
        return std::nullopt;
    }
    name.remove_prefix(prefix.size());
    MemoryShareName share;
    const auto field = [&name](auto& value, bool last) {
        const auto end = last ? name.size() : name.find('.');
        if (end == std::string_view::npos || end == 0) {
            return false;
        }
        const auto text = name.substr(0, end);
        const auto [rest, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        name.remove_prefix(last ? end : end + 1);
        return error == std::errc{} && rest == text.data() + text.size();
    };
    if (!field(share.pid, false) || !field(share.job, false) || !field(share.mib, true) ||
        share.pid <= 0) {
        return std::nullopt;
    }
    return share;
}

std::optional<std::string> lease_whole_wait_name(std::string_view space, std::string_view key)
{
    auto name = std::string(space) + encode(key) + k_hashed_mark + "w";
    if (name.size() > k_longest_socket_name) {
        return std::nullopt;
    }
    return name;
}

bool is_lease_memory_share(std::string_view space, std::string_view name)
{
    if (!name.starts_with(space)) {
        return false;
    }
    const auto slash = name.find('/', space.size());
    return slash != std::string_view::npos && name.substr(slash + 1).starts_with('m');
}

std::string lease_admission_name(std::string_view space, std::string_view key)
{
    return std::string(space) + "admit/" + encode(key);
}

bool may_have_mig_instances(std::string_view key)
{
    return key.starts_with("GPU-");
}

std::optional<std::string> lease_key_of_record_file(std::string_view file_name)
{
    if (!file_name.ends_with(k_record_suffix)) {
        return std::nullopt;
    }
    return decode(file_name.substr(0, file_name.size() - k_record_suffix.size()));
}

std::vector<std::string> lease_keys(const std::vector<std::string>& ids,
                                    const GpuInventory& inventory)
{
    std::vector<std::string> keys;
    keys.reserve(ids.size());
    for (const auto& id : ids) {
        if (id.starts_with("MIG-")) {
            const auto* mig = find_mig(inventory, id);
            keys.push_back(mig != nullptr ? mig->uuid : id);
            continue;
        }
        const auto index = as_index(id);
        const auto found =
            std::find_if(inventory.gpus.begin(), inventory.gpus.end(),
                         [&](const GpuInfo& gpu) { return index && gpu.index == *index; });
        if (found != inventory.gpus.end()) {
            keys.push_back(found->uuid);
            continue;
        }
        // The start of a UUID, as CUDA takes it (GPU-8e6b): the GPU it names, where one does,
        // so that it and the GPU's index or whole UUID take the same lease.
        const auto starts = [&](const GpuInfo& gpu) {
            return id.starts_with("GPU-") && gpu.uuid.starts_with(id);
        };
        const auto named = std::find_if(inventory.gpus.begin(), inventory.gpus.end(), starts);
        const bool one =
            named != inventory.gpus.end() &&
            std::find_if(std::next(named), inventory.gpus.end(), starts) == inventory.gpus.end();
        keys.push_back(one ? named->uuid : id);
    }
    return keys;
}

std::optional<std::string> lease_keys_problem(const std::vector<std::string>& ids,
                                              const std::vector<std::string>& keys,
                                              const GpuInventory& inventory)
{
    for (std::size_t i = 0; i < ids.size() && i < keys.size(); ++i) {
        if (ids[i].starts_with("GPU-") && keys[i] == ids[i]) {
            std::vector<std::string> named;
            for (const auto& gpu : inventory.gpus) {
                if (gpu.uuid.starts_with(ids[i]) && gpu.uuid != ids[i]) {
                    named.push_back(gpu.uuid);
                }
            }
            if (named.size() > 1) {
                return fmt::format("GPU {} is the start of the UUIDs of {} GPUs ({}): give enough "
                                   "of its UUID to name one",
                                   ids[i], named.size(), fmt::join(named, ", "));
            }
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (keys[j] == keys[i]) {
                return fmt::format("GPUs {} and {} are one GPU ({}): name it once", ids[j], ids[i],
                                   keys[i]);
            }
        }
    }
    return std::nullopt;
}

std::vector<std::string> lease_parents(const std::vector<std::string>& keys,
                                       const GpuInventory& inventory)
{
    std::vector<std::string> parents;
    parents.reserve(keys.size());
    for (const auto& key : keys) {
        const auto mig = std::find_if(inventory.migs.begin(), inventory.migs.end(),
                                      [&](const MigInfo& listed) { return listed.uuid == key; });
        if (mig != inventory.migs.end()) {
            parents.push_back(mig->parent_uuid);
        } else if (key.starts_with("MIG-GPU-") && key.find('/') != std::string::npos) {
            parents.push_back(key.substr(4, key.find('/') - 4)); // MIG-GPU-<uuid>/<gi>/<ci>
        } else {
            parents.emplace_back();
        }
    }
    return parents;
}

bool has_mig_ids(const std::vector<std::string>& ids)
{
    return std::any_of(ids.begin(), ids.end(),
                       [](const std::string& id) { return id.starts_with("MIG-"); });
}

bool has_partial_uuids(const std::vector<std::string>& ids)
{
    constexpr std::size_t k_uuid_length = 40; // GPU- and 8-4-4-4-12 hexadecimal digits
    return std::any_of(ids.begin(), ids.end(), [](const std::string& id) {
        return id.starts_with("GPU-") && id.size() < k_uuid_length;
    });
}

bool has_gpu_indices(const std::vector<std::string>& ids)
{
    return std::any_of(ids.begin(), ids.end(),
                       [](const std::string& id) { return as_index(id).has_value(); });
}

} // namespace gpusched
