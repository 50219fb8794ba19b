#include <gpusched/joblog.hpp>

#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <charconv>

namespace gpusched {
namespace {

constexpr std::string_view k_header =
    "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\tGPU";
constexpr std::size_t k_fields_before_command = 8;

template <class Number>
bool parse_field(std::string_view text, Number& value)
{
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc{} && end == text.data() + text.size() && !text.empty();
}

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
    if (!parse_field(fields[0], record.seq) || record.seq == 0) {
        return ParseError{fmt::format("bad Seq '{}'", fields[0])};
    }
    if (!parse_field(fields[2], record.start) || !parse_field(fields[3], record.runtime)) {
        return ParseError{"bad Starttime or JobRuntime"};
    }
    if (!parse_field(fields[6], record.exit_code) || !parse_field(fields[7], record.signal)) {
        return ParseError{fmt::format("bad Exitval '{}' or Signal '{}'", fields[6], fields[7])};
    }
    // The command runs from the ninth field to the last tab, which starts the GPU.
    const auto command_start = static_cast<std::size_t>(fields[8].data() - line.data());
    const auto last_tab = line.rfind('\t');
    record.command = std::string(line.substr(command_start, last_tab - command_start));
    record.gpu = std::string(line.substr(last_tab + 1));
    return record;
}

} // namespace gpusched
