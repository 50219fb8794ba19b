#include <gpusched/gpu_usage.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/probe_protocol.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpusched {
namespace {

constexpr std::uint64_t k_mebibyte = 1024 * 1024;

std::string optional_field(const std::optional<unsigned>& value)
{
    return value ? std::to_string(*value) : "-";
}

// "-" is unknown; anything else must be a number.
bool parse_optional_field(std::string_view text, std::optional<unsigned>& value)
{
    if (text == "-") {
        return true;
    }
    value = parse_number<unsigned>(text);
    return value.has_value();
}

} // namespace

std::string format_usage(const UsageReport& report)
{
    if (!report.problem.empty()) {
        return probe_error_line(report.problem);
    }
    std::string text;
    for (const auto& [id, usage] : report.gpus) {
        std::string processes;
        for (const auto& process : usage.processes) {
            processes += fmt::format("{}{}:{}", processes.empty() ? "" : ",", process.pid,
                                     process.used_memory);
        }
        text += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", id, usage.used_memory, usage.total_memory,
                            processes, optional_field(usage.utilization_percent),
                            optional_field(usage.temperature_celsius));
    }
    return text;
}

UsageReport parse_usage(std::string_view text)
{
    UsageReport report;
    if (auto why = probe_error(text)) {
        report.problem = std::move(*why);
        return report;
    }
    for (const auto line : split(text, '\n')) {
        if (line.empty()) {
            continue;
        }
        const auto fields = split(line, '\t');
        const bool whole = fields.size() == 6;
        const auto used = whole ? parse_number<std::uint64_t>(fields[1]) : std::nullopt;
        const auto total = whole ? parse_number<std::uint64_t>(fields[2]) : std::nullopt;
        bool valid = used && total;
        GpuUsage usage{used.value_or(0), total.value_or(0), {}};
        valid = valid && parse_optional_field(fields[4], usage.utilization_percent) &&
                parse_optional_field(fields[5], usage.temperature_celsius);
        for (const auto process : valid && !fields[3].empty() ? split(fields[3], ',')
                                                              : std::vector<std::string_view>{}) {
            const auto colon = process.find(':');
            const auto pid = parse_number<int>(process.substr(0, colon));
            const auto memory = colon == std::string_view::npos
                                    ? std::nullopt
                                    : parse_number<std::uint64_t>(process.substr(colon + 1));
            valid = valid && pid && memory;
            usage.processes.push_back({pid.value_or(0), memory.value_or(0)});
        }
        if (!valid) {
            return UsageReport{{}, fmt::format("the usage probe answered '{}'", line)};
        }
        report.gpus.emplace(std::string(fields[0]), std::move(usage));
    }
    return report;
}

std::optional<std::string> BusyRule::busy_reason(const GpuUsage& usage,
                                                 const std::vector<int>& foreign_pids,
                                                 bool runs_our_jobs) const
{
    if (!foreign_pids.empty()) {
        return fmt::format("{} compute process{} not started by gpusched (pid {})",
                           foreign_pids.size(), foreign_pids.size() == 1 ? "" : "es",
                           fmt::join(foreign_pids, ", "));
    }
    // Memory our own jobs use says nothing about anyone else.
    if (max_used_mib && !runs_our_jobs && usage.used_memory > *max_used_mib * k_mebibyte) {
        return fmt::format("{} MiB of memory in use, more than --max-used-mib {}",
                           usage.used_memory / k_mebibyte, *max_used_mib);
    }
    return std::nullopt;
}

} // namespace gpusched
