#include <gpusched/joblog.hpp>

#include <gpusched/memory_size.hpp>
#include <gpusched/visible_text.hpp>
#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace gpusched {
namespace {

constexpr std::string_view k_parallel_header =
    "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand";
constexpr std::string_view k_gpu_columns = "\tGPU\tStopped";
constexpr std::size_t k_fields_before_command = 8;
// How Host names the GPU in a record gpusched wrote: "gpu=0,1", then ";timeout" or
// ";interrupted" for an attempt gpusched stopped, ";oom" for one that ran out of GPU memory
// and ";peak=SIZE" for the most GPU memory it was seen to use, in MiB.
constexpr std::string_view k_gpu_host = "gpu=";
constexpr char k_end_separator = ';';
constexpr std::string_view k_out_of_memory_word = "oom";
constexpr std::string_view k_peak_word = "peak=";
constexpr std::uint64_t k_mebibyte = std::uint64_t{1} << 20;
// The Exitval of an attempt the scheduler stopped that did not fail by itself: GNU
// parallel's, for the jobs it kills.
constexpr int k_stopped_exit_value = -1;

constexpr std::array<std::pair<AttemptEnd, std::string_view>, 3> k_end_words = {{
    {AttemptEnd::by_itself, "no"},
    {AttemptEnd::timeout, "timeout"},
    {AttemptEnd::interrupted, "interrupted"},
}};

// GNU parallel pads JobRuntime with spaces ("%10.3f").
std::string_view without_padding(std::string_view field)
{
    const auto first = field.find_first_not_of(' ');
    if (first == std::string_view::npos) {
        return {};
    }
    return field.substr(first, field.find_last_not_of(' ') - first + 1);
}

// The numbers of the eight columns before the command, each checked against what a run
// can write (and GNU parallel's -1 and -2 for a job it killed or skipped), so that a damaged
// or forged log cannot feed nan or 1e308 to a report.
Result<JoblogRecord> parse_numbers(const std::vector<std::string_view>& fields)
{
    JoblogRecord record;
    const auto seq = parse_number<JobId>(fields[0]);
    if (!seq || *seq == 0) {
        return Failure{fmt::format("bad Seq '{}'", visible_text(fields[0].substr(0, 40)))};
    }
    constexpr double k_latest_start = 4102444800; // 2100-01-01, in seconds since 1970
    constexpr double k_longest_runtime = 100 * 365.25 * 24 * 3600;
    const auto within = [](std::optional<double> value, double most) {
        return value && *value >= 0 && *value <= most; // false for nan and inf too
    };
    const auto start = parse_number<double>(without_padding(fields[2]));
    if (!within(start, k_latest_start)) {
        return Failure{fmt::format("bad Starttime '{}': must be from 0 to {:.0f} (seconds "
                                   "since 1970, before the year 2100)",
                                   visible_text(fields[2].substr(0, 40)), k_latest_start)};
    }
    const auto runtime = parse_number<double>(without_padding(fields[3]));
    if (!within(runtime, k_longest_runtime)) {
        return Failure{fmt::format("bad JobRuntime '{}': must be from 0 to {:.0f} seconds",
                                   visible_text(fields[3].substr(0, 40)), k_longest_runtime)};
    }
    const auto exit_code = parse_number<int>(without_padding(fields[6]));
    if (!exit_code || *exit_code < -2 || *exit_code > 255) {
        return Failure{fmt::format("bad Exitval '{}': must be from -2 to 255",
                                   visible_text(fields[6].substr(0, 40)))};
    }
    const auto signal = parse_number<int>(without_padding(fields[7]));
    if (!signal || *signal < 0 || *signal > 127) {
        return Failure{fmt::format("bad Signal '{}': must be from 0 to 127",
                                   visible_text(fields[7].substr(0, 40)))};
    }
    record.seq = *seq;
    record.start = *start;
    record.runtime = *runtime;
    record.exit_code = *exit_code;
    record.signal = *signal;
    return record;
}

// GNU parallel writes a newline of a command as a NUL byte, to keep one record a line.
std::string with_newlines_as(std::string_view command, char from, char to)
{
    std::string text(command);
    std::replace(text.begin(), text.end(), from, to);
    return text;
}

std::string host_of(const JoblogRecord& record)
{
    if (record.gpu.empty()) {
        return ":"; // how GNU parallel names the local machine
    }
    auto host = fmt::format("{}{}", k_gpu_host, record.gpu);
    if (record.end != AttemptEnd::by_itself) {
        host += fmt::format("{}{}", k_end_separator, attempt_end_word(record.end));
    }
    if (record.out_of_memory) {
        host += fmt::format("{}{}", k_end_separator, k_out_of_memory_word);
    }
    if (record.peak_memory > 0) {
        host += fmt::format("{}{}{}M", k_end_separator, k_peak_word,
                            mebibytes_rounded_up(record.peak_memory));
    }
    return host;
}

// One of what follows the GPU ids in Host (";timeout", ";oom", ";peak=20480M"), into
// `record`; false for anything else.
bool read_host_word(std::string_view word, JoblogRecord& record)
{
    if (word == k_out_of_memory_word && !record.out_of_memory) {
        record.out_of_memory = true;
        return true;
    }
    if (word.starts_with(k_peak_word) && record.peak_memory == 0) {
        // Only as gpusched writes it: whole MiB, no leading zero, at most k_most_job_memory.
        auto mib = word.substr(k_peak_word.size());
        if (!mib.ends_with('M') || mib.starts_with('0')) {
            return false;
        }
        mib.remove_suffix(1);
        const auto peak = parse_number<std::uint64_t>(mib);
        if (!peak || *peak == 0 || *peak > k_most_job_memory / k_mebibyte) {
            return false;
        }
        record.peak_memory = *peak * k_mebibyte;
        return true;
    }
    const auto end = attempt_end_of(word);
    if (!end || *end == AttemptEnd::by_itself || record.end != AttemptEnd::by_itself) {
        return false;
    }
    record.end = *end;
    if (record.exit_code == k_stopped_exit_value) {
        record.exit_code = 0;
    }
    return true;
}

// What Host says in a record gpusched wrote ("gpu=0,1", then ";timeout" or ";interrupted",
// ";oom", ";peak=SIZE"), into `record`; any other Host is GNU parallel's, the machine it ran
// the job on.
Result<void> read_gpu_host(std::string_view host, JoblogRecord& record)
{
    if (!host.starts_with(k_gpu_host)) {
        return {};
    }
    auto gpu = host.substr(k_gpu_host.size());
    if (const auto separator = gpu.find(k_end_separator); separator != gpu.npos) {
        const auto words = split(gpu.substr(separator + 1), k_end_separator);
        const bool known = std::all_of(words.begin(), words.end(), [&](std::string_view word) {
            return read_host_word(word, record);
        });
        if (!known || separator == 0) {
            return Failure{fmt::format("bad Host '{}': must be gpu=IDS, then ;timeout or "
                                       ";interrupted for an attempt gpusched stopped, ;oom, "
                                       ";peak=SIZE",
                                       visible_text(host.substr(0, 60)))};
        }
        gpu = gpu.substr(0, separator);
    }
    // Ids as gpusched gives them: none empty, none with a blank.
    const auto ids = split(gpu, ',');
    const bool well_formed = std::none_of(ids.begin(), ids.end(), [](std::string_view id) {
        return id.empty() || id.find_first_of(" \t\r\n\v\f") != std::string_view::npos;
    });
    if (!well_formed) {
        return Failure{fmt::format("bad Host '{}': its GPU ids must be comma-separated, "
                                   "none empty",
                                   visible_text(host.substr(0, 60)))};
    }
    record.gpu = std::string(gpu);
    return {};
}

// `rest` runs from the command to the end of the line, `fields` is the whole line's: the
// command runs to the tab that starts the GPU, the last one, or the one before it when the
// line ends with a Stopped word.
void read_gpu_after_command(std::string_view rest, const std::vector<std::string_view>& fields,
                            JoblogRecord& record)
{
    if (fields.size() > k_fields_before_command + 2) {
        if (const auto end = attempt_end_of(fields.back())) {
            record.end = *end;
            rest.remove_suffix(fields.back().size() + 1);
        }
    }
    const auto gpu_tab = rest.rfind('\t');
    record.command = std::string(rest.substr(0, gpu_tab));
    record.gpu = std::string(rest.substr(gpu_tab + 1));
}

} // namespace

std::string joblog_header(JoblogLayout layout)
{
    if (layout == JoblogLayout::gpu_after_command) {
        return fmt::format("{}{}", k_parallel_header, k_gpu_columns);
    }
    return std::string(k_parallel_header);
}

bool is_joblog_header(std::string_view line)
{
    return line.substr(0, 4) == "Seq\t";
}

std::optional<JoblogLayout> joblog_layout_of_header(std::string_view line)
{
    if (!is_joblog_header(line)) {
        return std::nullopt;
    }
    const bool gpu_column = line.ends_with("\tGPU") || line.ends_with(k_gpu_columns);
    return gpu_column ? JoblogLayout::gpu_after_command : JoblogLayout::parallel;
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

std::string format_joblog_line(const JoblogRecord& record, JoblogLayout layout)
{
    if (layout == JoblogLayout::gpu_after_command) {
        return fmt::format("{}\t:\t{:.3f}\t{:.3f}\t0\t0\t{}\t{}\t{}\t{}\t{}", record.seq,
                           record.start, record.runtime, record.exit_code, record.signal,
                           record.command, record.gpu, attempt_end_word(record.end));
    }
    const bool stopped_without_failing =
        record.end != AttemptEnd::by_itself && record.exit_code == 0;
    // GNU parallel's own widths: Starttime "%.3f", JobRuntime "%10.3f".
    return fmt::format("{}\t{}\t{:.3f}\t{:10.3f}\t0\t0\t{}\t{}\t{}", record.seq, host_of(record),
                       record.start, record.runtime,
                       stopped_without_failing ? k_stopped_exit_value : record.exit_code,
                       record.signal, with_newlines_as(record.command, '\n', '\0'));
}

Result<JoblogRecord> parse_joblog_line(std::string_view line, JoblogLayout layout)
{
    const auto fields = split(line, '\t');
    const std::size_t least = k_fields_before_command + 1;
    if (fields.size() < least) {
        return Failure{
            fmt::format("expected {} tab-separated fields, found {}", least, fields.size())};
    }
    auto record = parse_numbers(fields);
    if (!record) {
        return record;
    }
    const auto rest = line.substr(static_cast<std::size_t>(fields[8].data() - line.data()));
    // GNU parallel appends its nine columns to whatever log it resumes, gpusched's older
    // ones included.
    if (layout == JoblogLayout::gpu_after_command && fields.size() > least) {
        read_gpu_after_command(rest, fields, *record);
        return record;
    }
    if (auto host = read_gpu_host(fields[1], *record); !host) {
        return host.failure();
    }
    record->command = with_newlines_as(rest, '\0', '\n');
    return record;
}

} // namespace gpusched
