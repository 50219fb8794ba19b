#include <gpusched/gpu_list.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

namespace gpusched {
namespace {

// More ids than any machine has; stops "0-4000000000" from filling memory.
constexpr unsigned long k_max_gpu_index = 65535;

// What an id may be, said in every refusal of one.
constexpr std::string_view k_option_ids = "a number, a range such as 0-3, or a GPU-/MIG- UUID";
constexpr std::string_view k_visible_ids = "a number or a GPU-/MIG- UUID; CUDA reads no ranges";

// A UUID as nvidia-smi and CUDA write it: hex digits in groups of 8-4-4-4-12.
constexpr std::string_view k_uuid_shape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

bool is_decimal(std::string_view text)
{
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Leading zeros are allowed, as in any number: 007 is GPU 7. The builder drops them, so that
// `--gpus 07` and `--gpus 7` take the same lock file, and jobs get the plain index that CUDA
// reads whichever way it parses numbers.
std::optional<unsigned long> parse_index(std::string_view text)
{
    const auto value = is_decimal(text) ? parse_number<unsigned long>(text) : std::nullopt;
    return value && *value <= k_max_gpu_index ? value : std::nullopt;
}

// A whole UUID or the start of one: CUDA takes any prefix that names a single GPU.
bool is_uuid_prefix(std::string_view text)
{
    if (text.empty() || text.size() > k_uuid_shape.size()) {
        return false;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (k_uuid_shape[i] == '-' ? text[i] != '-' : !is_hex(text[i])) {
            return false;
        }
    }
    return true;
}

// What follows MIG-GPU-: the GPU's UUID (or its start), or all of it and then the GPU and
// compute instances, /<gi>/<ci>.
bool is_old_mig_id(std::string_view text)
{
    const auto slash = text.find('/');
    if (slash == std::string_view::npos) {
        return is_uuid_prefix(text);
    }
    const auto instances = split(text.substr(slash + 1), '/');
    return slash == k_uuid_shape.size() && is_uuid_prefix(text.substr(0, slash)) &&
           instances.size() == 2 && parse_index(instances[0]) && parse_index(instances[1]);
}

// GPU-<uuid>, MIG-<uuid> or MIG-GPU-<uuid>/<gi>/<ci>, each <uuid> possibly abbreviated. A
// UUID's first character is a hex digit, so MIG-GPU- cannot be the start of a MIG-<uuid>.
bool is_uuid_id(std::string_view id)
{
    if (id.starts_with("GPU-")) {
        return is_uuid_prefix(id.substr(4));
    }
    if (id.starts_with("MIG-GPU-")) {
        return is_old_mig_id(id.substr(8));
    }
    return id.starts_with("MIG-") && is_uuid_prefix(id.substr(4));
}

bool has_blank(std::string_view text)
{
    return text.find_first_of(" \t\n\r\f\v") != std::string_view::npos;
}

Failure not_an_id(std::string_view entry, std::string_view source, std::string_view ids)
{
    return Failure{fmt::format("'{}' in '{}' is not a GPU id ({})", entry, source, ids)};
}

Failure too_large(std::string_view entry, std::string_view source)
{
    return Failure{
        fmt::format("GPU index '{}' in '{}' is larger than {}", entry, source, k_max_gpu_index)};
}

// Adds one id, or returns why it cannot be added. Indices come in as numbers, so "00" and
// "0" are the same GPU.
class GpuListBuilder {
public:
    Result<void> add(std::string id, std::string_view source)
    {
        if (!m_seen.insert(id).second) {
            return Failure{fmt::format("GPU '{}' is listed twice in '{}'", id, source)};
        }
        m_ids.push_back(std::move(id));
        return {};
    }

    Result<void> add_index(unsigned long index, std::string_view source)
    {
        return add(std::to_string(index), source);
    }

    std::vector<std::string> take() { return std::move(m_ids); }

private:
    std::vector<std::string> m_ids;
    std::unordered_set<std::string> m_seen;
};

// Ranges are gpusched's own: CUDA_VISIBLE_DEVICES has none.
enum class Ranges { allowed, refused };

// One entry: an index, a UUID, or (where allowed) a range FIRST-LAST of indices.
Result<void> add_entry(GpuListBuilder& builder, std::string_view entry, std::string_view source,
                       Ranges ranges)
{
    if (is_decimal(entry)) {
        const auto index = parse_index(entry);
        if (!index) {
            return too_large(entry, source);
        }
        return builder.add_index(*index, source);
    }
    if (is_uuid_id(entry)) {
        return builder.add(std::string(entry), source);
    }
    if (ranges == Ranges::refused) {
        return not_an_id(entry, source, k_visible_ids);
    }
    const auto dash = entry.find('-');
    if (dash == std::string_view::npos || !is_decimal(entry.substr(0, dash)) ||
        !is_decimal(entry.substr(dash + 1))) {
        return not_an_id(entry, source, k_option_ids);
    }
    const auto first = parse_index(entry.substr(0, dash));
    const auto last = parse_index(entry.substr(dash + 1));
    if (!first || !last || *first > *last) {
        return Failure{
            fmt::format("bad GPU range '{}' in '{}': expected FIRST-LAST with FIRST <= LAST <= {}",
                        entry, source, k_max_gpu_index)};
    }
    for (auto index = *first; index <= *last; ++index) {
        if (auto added = builder.add_index(index, source); !added) {
            return added;
        }
    }
    return {};
}

// CLI11 reads `-gpus 0` as `-g pus 0`, so a first id that is the rest of a long option's
// name (-gpus, -gpus-per-job) gets a hint: `'pus' is not a GPU id` alone is a riddle. How the
// option was typed is not known here, so the hint is a question.
Failure with_hint(Failure error, std::string_view entry)
{
    if (entry.starts_with("pus")) {
        error.message += fmt::format("; -g{0} is read as -g {0}: did you mean --g{0}?", entry);
    }
    return error;
}

} // namespace

Result<std::vector<std::string>> parse_gpu_list(const std::vector<std::string>& tokens,
                                                std::string_view option)
{
    if (tokens.empty()) {
        return Failure{fmt::format("{} needs at least one GPU id", option)};
    }
    const bool is_option = option.starts_with("-");
    GpuListBuilder builder;
    bool first = true;
    for (const auto& token : tokens) {
        const auto source = fmt::format("{}{}{}", option, is_option ? " " : "=", token);
        for (const auto entry : split(token, ',')) {
            const bool follows_option = std::exchange(first, false);
            if (entry.empty()) {
                return Failure{fmt::format("empty GPU id in '{}'", source)};
            }
            if (has_blank(entry)) {
                return Failure{
                    fmt::format("GPU id '{}' in '{}' contains whitespace", entry, source)};
            }
            if (auto added = add_entry(builder, entry, source, Ranges::allowed); !added) {
                return is_option && follows_option ? with_hint(added.failure(), entry)
                                                   : added.failure();
            }
        }
    }
    return builder.take();
}

bool looks_like_gpu_ids(std::string_view token)
{
    const auto parts = split(token, ',');
    return std::all_of(parts.begin(), parts.end(), [](std::string_view part) {
        const bool index_or_range =
            part.find_first_not_of("0123456789-") == std::string_view::npos &&
            part.find_first_of("0123456789") != std::string_view::npos;
        return part.empty() || index_or_range || part.starts_with("GPU-") ||
               part.starts_with("MIG-");
    });
}

Result<std::vector<std::string>> parse_visible_devices(std::string_view value)
{
    const auto source = fmt::format("CUDA_VISIBLE_DEVICES={}", value);
    if (value.empty()) {
        return Failure{"CUDA_VISIBLE_DEVICES is set but empty, so no GPU is visible; unset it or "
                       "pass the GPUs with --gpus"};
    }
    GpuListBuilder builder;
    for (const auto entry : split(value, ',')) {
        if (entry.empty() || has_blank(entry)) {
            return Failure{fmt::format("empty or blank entry in '{}'", source)};
        }
        if (auto added = add_entry(builder, entry, source, Ranges::refused); !added) {
            return added.failure();
        }
    }
    return builder.take();
}

} // namespace gpusched
