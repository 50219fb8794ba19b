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
    const auto start = parse_number<double>(fields[2]);
    const auto runtime = parse_number<double>(fields[3]);
    if (!start || !runtime) {
        return ParseError{"bad Starttime or JobRuntime"};
    }
    const auto exit_code = parse_number<int>(fields[6]);
    const auto signal = parse_number<int>(fields[7]);
    if (!exit_code || !signal) {
        return ParseError{fmt::format("bad Exitval '{}' or Signal '{}'", fields[6], fields[7])};
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
