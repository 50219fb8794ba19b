#include <gpusched/lease_names.hpp>

#include <gpusched/parse_number.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace gpusched {
namespace {

constexpr std::string_view k_lock_suffix = ".lock";

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

std::optional<int> as_index(const std::string& id)
{
    const auto index = parse_number<int>(id);
    return index && *index >= 0 ? index : std::nullopt;
}

} // namespace

std::string lease_file_name(std::string_view key)
{
    std::string name;
    name.reserve(key.size() + k_lock_suffix.size());
    for (const char c : key) {
        if (kept_as_is(c)) {
            name += c;
        } else {
            name += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        }
    }
    name += k_lock_suffix;
    return name;
}

std::optional<std::string> lease_key_of_file(std::string_view file_name)
{
    if (file_name.size() <= k_lock_suffix.size() || !file_name.ends_with(k_lock_suffix)) {
        return std::nullopt;
    }
    const auto encoded = file_name.substr(0, file_name.size() - k_lock_suffix.size());
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

std::vector<std::string> lease_keys(const std::vector<std::string>& ids,
                                    const GpuInventory& inventory)
{
    std::vector<std::string> keys;
    keys.reserve(ids.size());
    for (const auto& id : ids) {
        const auto index = as_index(id);
        const auto found =
            std::find_if(inventory.gpus.begin(), inventory.gpus.end(),
                         [&](const GpuInfo& gpu) { return index && gpu.index == *index; });
        keys.push_back(found != inventory.gpus.end() ? found->uuid : id);
    }
    return keys;
}

bool has_gpu_indices(const std::vector<std::string>& ids)
{
    return std::any_of(ids.begin(), ids.end(),
                       [](const std::string& id) { return as_index(id).has_value(); });
}

} // namespace gpusched
