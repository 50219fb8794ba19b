#include <gpusched/joblog.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <array>
#include <optional>
#include <utility>

namespace gpusched {
namespace {

constexpr std::string_view k_header =
    "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal"
    "\tCommand\tGPU\tStopped";
constexpr std::size_t k_fields_before_command = 8;

constexpr std::array<std::pair<AttemptEnd, std::string_view>, 3> k_end_words = {{
    {AttemptEnd::by_itself, "no"},
    {AttemptEnd::timeout, "timeout"},
    {AttemptEnd::interrupted, "interrupted"},
}};

} // namespace

std::string joblog_header()
{
    return std::string(k_header);
}

bool is_joblog_header(std::string_view line)
{
    return line.substr(0, 4) == "Seq\t";
}

bool looks_like_torn_record(std::string_view line)
{
    const auto digits = line.find_first_not_of("0123456789");
    return !line.empty() && digits != 0 &&
           (digits == std::string_view::npos || line[digits] == '\t');
}

std::optional<AttemptEnd> attempt_end_of(std::string_view word)
{
    for (const auto& [end, end_word] : k_end_words) {
        if (word == end_word) {
            return end;
        }
    }
    return std::nullopt;
}

std::string_view attempt_end_word(AttemptEnd end)
{
    for (const auto& [known, word] : k_end_words) {
        if (known == end) {
            return word;
        }
    }
    return "no";
}

std::string format_joblog_line(const JoblogRecord& record)
{
    // Host ":" is how GNU parallel writes the local machine.
    return fmt::format("{}\t:\t{:.3f}\t{:.3f}\t0\t0\t{}\t{}\t{}\t{}\t{}", record.seq, record.start,
                       record.runtime, record.exit_code, record.signal, record.command, record.gpu,
                       attempt_end_word(record.end));
}

Result<JoblogRecord> parse_joblog_line(std::string_view line)
{
    auto fields = split(line, '\t');
    if (fields.size() < k_fields_before_command + 2) {
        return Failure{fmt::format("expected {} tab-separated fields, found {}",
                                   k_fields_before_command + 2, fields.size())};
    }
    JoblogRecord record;
    const auto seq = parse_number<JobId>(fields[0]);
    if (!seq || *seq == 0) {
        return Failure{fmt::format("bad Seq '{}'", fields[0])};
    }
    // Every number is checked against what a run can write (and GNU parallel's -1 for an
    // exit value), so a damaged or forged log cannot feed nan or 1e308 to a report.
    constexpr double k_latest_start = 4102444800; // 2100-01-01, in seconds since 1970
    constexpr double k_longest_runtime = 100 * 365.25 * 24 * 3600;
    const auto within = [](std::optional<double> value, double most) {
        return value && *value >= 0 && *value <= most; // false for nan and inf too
    };
    const auto start = parse_number<double>(fields[2]);
    if (!within(start, k_latest_start)) {
        return Failure{fmt::format("bad Starttime '{}': must be from 0 to {:.0f} (seconds "
                                   "since 1970, before the year 2100)",
                                   fields[2].substr(0, 40), k_latest_start)};
    }
    const auto runtime = parse_number<double>(fields[3]);
    if (!within(runtime, k_longest_runtime)) {
        return Failure{fmt::format("bad JobRuntime '{}': must be from 0 to {:.0f} seconds",
                                   fields[3].substr(0, 40), k_longest_runtime)};
    }
    const auto exit_code = parse_number<int>(fields[6]);
    if (!exit_code || *exit_code < -1 || *exit_code > 255) {
        return Failure{
            fmt::format("bad Exitval '{}': must be from -1 to 255", fields[6].substr(0, 40))};
    }
    const auto signal = parse_number<int>(fields[7]);
    if (!signal || *signal < 0 || *signal > 127) {
        return Failure{
            fmt::format("bad Signal '{}': must be from 0 to 127", fields[7].substr(0, 40))};
    }
    record.seq = *seq;
    record.start = *start;
    record.runtime = *runtime;
    record.exit_code = *exit_code;
    record.signal = *signal;
    // The command runs from the ninth field to the tab that starts the GPU: the last one, or
    // the one before it when the line ends with a Stopped word.
    auto rest = line.substr(static_cast<std::size_t>(fields[8].data() - line.data()));
    if (fields.size() > k_fields_before_command + 2) {
        if (const auto end = attempt_end_of(fields.back())) {
            record.end = *end;
            rest.remove_suffix(fields.back().size() + 1);
        }
    }
    const auto gpu_tab = rest.rfind('\t');
    record.command = std::string(rest.substr(0, gpu_tab));
    record.gpu = std::string(rest.substr(gpu_tab + 1));
    return record;
}

} // namespace gpusched
