#include <gpusched/joblog.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

namespace gpusched {
namespace {

constexpr std::string_view k_header =
    "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\tGPU";
constexpr std::size_t k_fields_before_command = 8;

} // namespace

std::string joblog_header()
{
    return std::string(k_header);
}

bool is_joblog_header(std::string_view line)
{
    return line.substr(0, 4) == "Seq\t";
}

std::string format_joblog_line(const JoblogRecord& record)
{
    // Host ":" is how GNU parallel writes the local machine.
    return fmt::format("{}\t:\t{:.3f}\t{:.3f}\t0\t0\t{}\t{}\t{}\t{}", record.seq, record.start,
                       record.runtime, record.exit_code, record.signal, record.command, record.gpu);
}

Parsed<JoblogRecord> parse_joblog_line(std::string_view line)
{
    auto fields = split(line, '\t');
    if (fields.size() < k_fields_before_command + 2) {
        return ParseError{fmt::format("expected {} tab-separated fields, found {}",
                                      k_fields_before_command + 2, fields.size())};
    }
    JoblogRecord record;
    const auto seq = parse_number<JobId>(fields[0]);
    if (!seq || *seq == 0) {
        return ParseError{fmt::format("bad Seq '{}'", fields[0])};
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
        return ParseError{fmt::format("bad Starttime '{}': must be from 0 to {:.0f} (seconds "
                                      "since 1970, before the year 2100)",
                                      fields[2].substr(0, 40), k_latest_start)};
    }
    const auto runtime = parse_number<double>(fields[3]);
    if (!within(runtime, k_longest_runtime)) {
        return ParseError{fmt::format("bad JobRuntime '{}': must be from 0 to {:.0f} seconds",
                                      fields[3].substr(0, 40), k_longest_runtime)};
    }
    const auto exit_code = parse_number<int>(fields[6]);
    if (!exit_code || *exit_code < -1 || *exit_code > 255) {
        return ParseError{
            fmt::format("bad Exitval '{}': must be from -1 to 255", fields[6].substr(0, 40))};
    }
    const auto signal = parse_number<int>(fields[7]);
    if (!signal || *signal < 0 || *signal > 127) {
        return ParseError{
            fmt::format("bad Signal '{}': must be from 0 to 127", fields[7].substr(0, 40))};
    }
    record.seq = *seq;
    record.start = *start;
    record.runtime = *runtime;
    record.exit_code = *exit_code;
    record.signal = *signal;
    // The command runs from the ninth field to the last tab, which starts the GPU.
    const auto command_start = static_cast<std::size_t>(fields[8].data() - line.data());
    const auto last_tab = line.rfind('\t');
    record.command = std::string(line.substr(command_start, last_tab - command_start));
    record.gpu = std::string(line.substr(last_tab + 1));
    return record;
}

} // namespace gpusched
