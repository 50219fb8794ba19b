#include <gpusched/gpu_list.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace gpusched {
namespace {

// More ids than any machine has; stops "0-4000000000" from filling memory.
constexpr unsigned long k_max_gpu_index = 65535;

bool is_decimal(std::string_view text)
{
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<unsigned long> parse_index(std::string_view text)
{
    const auto value = parse_number<unsigned long>(text);
    return value && *value <= k_max_gpu_index ? value : std::nullopt;
}

// Adds one id, or returns why it cannot be added. Indices are compared by value, so "00"
// and "0" are the same GPU.
class GpuListBuilder {
public:
    std::optional<ParseError> add(std::string id, std::string_view source)
    {
        std::string key = id;
        if (const auto index = parse_index(id); index && is_decimal(id)) {
            key = std::to_string(*index);
            id = key;
        }
        if (!m_seen.insert(key).second) {
            return ParseError{fmt::format("GPU '{}' is listed twice in '{}'", id, source)};
        }
        m_ids.push_back(std::move(id));
        return std::nullopt;
    }

    std::vector<std::string> take() { return std::move(m_ids); }

private:
    std::vector<std::string> m_ids;
    std::unordered_set<std::string> m_seen;
};

std::optional<ParseError> add_entry(GpuListBuilder& builder, std::string_view entry,
                                    std::string_view source)
{
    const auto dash = entry.find('-');
    const bool is_range = dash != std::string_view::npos && is_decimal(entry.substr(0, dash)) &&
                          is_decimal(entry.substr(dash + 1));
    if (!is_range) {
        if (is_decimal(entry) && !parse_index(entry)) {
            return ParseError{fmt::format("GPU index '{}' in '{}' is larger than {}", entry, source,
                                          k_max_gpu_index)};
        }
        return builder.add(std::string(entry), source);
    }
    const auto first = parse_index(entry.substr(0, dash));
    const auto last = parse_index(entry.substr(dash + 1));
    if (!first || !last || *first > *last) {
        return ParseError{
            fmt::format("bad GPU range '{}' in '{}': expected FIRST-LAST with FIRST <= LAST <= {}",
                        entry, source, k_max_gpu_index)};
    }
    for (auto index = *first; index <= *last; ++index) {
        if (auto error = builder.add(std::to_string(index), source)) {
            return error;
        }
    }
    return std::nullopt;
}

bool has_blank(std::string_view text)
{
    return text.find_first_of(" \t\n\r\f\v") != std::string_view::npos;
}

} // namespace

Parsed<std::vector<std::string>> parse_gpu_list(const std::vector<std::string>& tokens)
{
    if (tokens.empty()) {
        return ParseError{"--gpus needs at least one GPU id"};
    }
    GpuListBuilder builder;
    for (const auto& token : tokens) {
        const auto source = fmt::format("--gpus {}", token);
        for (const auto entry : split(token, ',')) {
            if (entry.empty()) {
                return ParseError{fmt::format("empty GPU id in '{}'", source)};
            }
            if (has_blank(entry)) {
                return ParseError{
                    fmt::format("GPU id '{}' in '{}' contains whitespace", entry, source)};
            }
            if (auto error = add_entry(builder, entry, source)) {
                return *error;
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
        return part.empty() || index_or_range || part.substr(0, 4) == "GPU-" ||
               part.substr(0, 4) == "MIG-";
    });
}

Parsed<std::vector<std::string>> parse_visible_devices(std::string_view value)
{
    const auto source = fmt::format("CUDA_VISIBLE_DEVICES={}", value);
    if (value.empty()) {
        return ParseError{
            "CUDA_VISIBLE_DEVICES is set but empty, so no GPU is visible; unset it or "
            "pass the GPUs with --gpus"};
    }
    std::vector<std::string> ids;
    std::unordered_set<std::string_view> seen;
    for (const auto entry : split(value, ',')) {
        if (entry.empty() || has_blank(entry)) {
            return ParseError{fmt::format("empty or blank entry in '{}'", source)};
        }
        if (!seen.insert(entry).second) {
            return ParseError{fmt::format("GPU '{}' is listed twice in '{}'", entry, source)};
        }
        ids.emplace_back(entry);
    }
    return ids;
}

} // namespace gpusched
