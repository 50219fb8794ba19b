#include <gpusched/joblog_report.hpp>

#include <gpusched/job_messages.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

namespace gpusched {
namespace {

std::string outcome_text(const JoblogRecord& record)
{
    const auto outcome = describe_outcome(JobOutcome{record.exit_code, record.signal});
    return record.interrupted() ? fmt::format("interrupted ({})", outcome) : outcome;
}

std::string seconds_text(double seconds)
{
    // A clock's duration holds about 292 years; records are checked far below that, but the
    // summary of any records must print.
    if (!(seconds >= 0 && seconds < 1e10)) {
        return fmt::format("{:.6g} s", seconds);
    }
    return format_duration(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds)));
}

// Length of the union of [start, end) intervals, and its longest gap inside [from, to).
struct Coverage {
    double covered = 0;
    double longest_gap = 0;
    double gap_from = 0;
};

Coverage coverage(std::vector<std::pair<double, double>> intervals, double from, double to)
{
    std::sort(intervals.begin(), intervals.end());
    Coverage result;
    double reached = from;
    const auto gap = [&](double start) {
        if (start - reached > result.longest_gap) {
            result.longest_gap = start - reached;
            result.gap_from = reached;
        }
    };
    for (const auto& [start, end] : intervals) {
        if (start > reached) {
            gap(start);
            reached = start;
        }
        if (end > reached) {
            result.covered += end - reached;
            reached = end;
        }
    }
    gap(to);
    return result;
}

// Text for XML: escapes markup characters and replaces bytes that are not valid UTF-8, or are
// control characters, with U+FFFD, so any command yields a well-formed document.
std::string xml_text(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        std::size_t length = byte < 0x80           ? 1
                             : (byte >> 5) == 0x6  ? 2
                             : (byte >> 4) == 0xE  ? 3
                             : (byte >> 3) == 0x1E ? 4
                                                   : 0;
        bool valid = length != 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k) {
            valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
        }
        if (!valid || (byte < 0x20 && byte != '\t')) {
            out += "\xEF\xBF\xBD";
            i += valid ? length : 1;
            continue;
        }
        switch (byte) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out.append(text.substr(i, length));
        }
        i += length;
    }
    return out;
}

// A round step for about `ticks` axis marks over `span` seconds: 1, 2 or 5 times a power of ten.
double tick_step(double span, int ticks)
{
    const double raw = std::max(span / ticks, 1e-3);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double factor : {1.0, 2.0, 5.0}) {
        if (factor * magnitude >= raw) {
            return factor * magnitude;
        }
    }
    return 10 * magnitude;
}

// An axis label: as many decimals as the step needs, and minutes for long spans.
std::string tick_label(double seconds, double step)
{
    if (step >= 60) {
        const auto whole = static_cast<long long>(std::llround(seconds));
        return fmt::format("{}:{:02}", whole / 60, whole % 60);
    }
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    return fmt::format("{:.{}f} s", seconds, decimals);
}

// GPU rows in nvidia-smi's order: indices by value, other ids after them by name.
bool gpu_before(const std::string& a, const std::string& b)
{
    const auto is_index = [](const std::string& id) {
        return !id.empty() && id.size() < 10 &&
               id.find_first_not_of("0123456789") == std::string::npos;
    };
    if (is_index(a) != is_index(b)) {
        return is_index(a);
    }
    return is_index(a) ? std::stoul(a) < std::stoul(b) : a < b;
}

const char* bar_class(const JoblogRecord& record)
{
    if (record.succeeded()) {
        return "attempt ok";
    }
    return record.signal != 0 ? "attempt killed" : "attempt failed";
}

} // namespace

JoblogSummary summarize_joblog(const std::vector<JoblogRecord>& records)
{
    JoblogSummary summary;
    if (records.empty()) {
        return summary;
    }
    summary.attempts = records.size();
    summary.first_start = records.front().start;
    summary.last_end = records.front().start + records.front().runtime;
    std::unordered_map<JobId, bool> last_outcome; // by job: did its last attempt succeed
    std::vector<std::string> gpu_order;
    std::unordered_map<std::string, std::vector<std::pair<double, double>>> busy;
    for (const auto& record : records) {
        const bool succeeded = record.succeeded() && !record.interrupted();
        last_outcome[record.seq] = succeeded;
        if (!succeeded) {
            ++summary.failed_attempts_by_outcome[outcome_text(record)];
        }
        summary.total_runtime += record.runtime;
        summary.first_start = std::min(summary.first_start, record.start);
        summary.last_end = std::max(summary.last_end, record.start + record.runtime);
        // A job of several GPUs (`0,1`) keeps each of them busy.
        for (const auto gpu : split(record.gpu, ',')) {
            auto& intervals = busy[std::string(gpu)];
            if (intervals.empty()) {
                gpu_order.emplace_back(gpu);
            }
            intervals.emplace_back(record.start, record.start + record.runtime);
        }
    }
    summary.jobs = last_outcome.size();
    for (const auto& [job, succeeded] : last_outcome) {
        ++(succeeded ? summary.succeeded : summary.failed);
    }
    std::sort(gpu_order.begin(), gpu_order.end(), gpu_before);
    for (const auto& gpu : gpu_order) {
        const auto& intervals = busy[gpu];
        const auto covered = coverage(intervals, summary.first_start, summary.last_end);
        summary.gpus.push_back(
            {gpu, intervals.size(), covered.covered, covered.longest_gap, covered.gap_from});
    }
    return summary;
}

std::string format_summary(const JoblogSummary& summary)
{
    std::string text =
        fmt::format("jobs      {} ({} succeeded, {} failed), {} attempts\n", summary.jobs,
                    summary.succeeded, summary.failed, summary.attempts);
    if (!summary.failed_attempts_by_outcome.empty()) {
        std::string failures;
        for (const auto& [outcome, count] : summary.failed_attempts_by_outcome) {
            failures += fmt::format("{}{}: {}", failures.empty() ? "" : ", ", outcome, count);
        }
        text += fmt::format("failures  {} (failed attempts by outcome)\n", failures);
    }
    const double wall = summary.last_end - summary.first_start;
    text += fmt::format(
        "runtime   total {}, mean {} per attempt, wall {}\n", seconds_text(summary.total_runtime),
        seconds_text(
            summary.attempts ? summary.total_runtime / static_cast<double>(summary.attempts) : 0),
        seconds_text(wall));
    const JoblogSummary::GpuUse* idlest = nullptr;
    for (const auto& gpu : summary.gpus) {
        text += fmt::format("GPU {:<6} busy {:5.1f}% ({} attempts), longest idle gap {}\n", gpu.gpu,
                            wall > 0 ? 100.0 * gpu.busy / wall : 100.0, gpu.attempts,
                            seconds_text(gpu.longest_idle));
        if (idlest == nullptr || gpu.longest_idle > idlest->longest_idle) {
            idlest = &gpu;
        }
    }
    if (idlest != nullptr && idlest->longest_idle > 0) {
        text += fmt::format("longest idle gap: {} on GPU {}, from {} after the first start\n",
                            seconds_text(idlest->longest_idle), idlest->gpu,
                            seconds_text(idlest->idle_from - summary.first_start));
    }
    return text;
}

std::string render_timeline_svg(const std::vector<JoblogRecord>& records)
{
    const auto summary = summarize_joblog(records);
    constexpr double k_left = 110;
    constexpr double k_plot_width = 860;
    constexpr double k_top = 40;
    constexpr double k_row = 30;
    const double span = std::max(summary.last_end - summary.first_start, 1e-3);
    const double height = k_top + k_row * static_cast<double>(summary.gpus.size()) + 60;
    const auto x_of = [&](double time) {
        return k_left + (time - summary.first_start) / span * k_plot_width;
    };

    std::string svg = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
        "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
        "<style>.ok{{fill:#43a047}}.failed{{fill:#e53935}}.killed{{fill:#fb8c00}}"
        ".attempt{{stroke:#fff;stroke-width:0.5}}.attempt:hover{{opacity:0.7}}"
        ".grid{{stroke:#ddd}}</style>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        "<text x=\"{2}\" y=\"20\" font-size=\"14\">{3} jobs, {4} failed, {5} attempts over "
        "{6}</text>\n",
        k_left + k_plot_width + 30, height, k_left, summary.jobs, summary.failed, summary.attempts,
        xml_text(seconds_text(span)));

    // Counted in whole steps: adding a step to a huge value (or to inf) changes nothing, and a
    // loop that waited for it to pass the span would never end.
    const double step = tick_step(span, 8);
    const double steps = std::floor((span + 1e-9) / step);
    const int last_tick = std::isfinite(steps) ? static_cast<int>(std::min(steps, 20.0)) : 0;
    for (int i = 0; i <= last_tick; ++i) {
        const double tick = i == 0 ? 0.0 : i * step;
        const double x = x_of(summary.first_start + tick);
        svg += fmt::format(
            "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>"
            "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4}</text>\n",
            x, k_top - 5, height - 45, height - 30, xml_text(tick_label(tick, step)));
    }
    std::unordered_map<std::string, double> row_of;
    for (std::size_t row = 0; row < summary.gpus.size(); ++row) {
        const double y = k_top + k_row * static_cast<double>(row);
        row_of[summary.gpus[row].gpu] = y;
        svg += fmt::format("<text x=\"{}\" y=\"{:.0f}\" text-anchor=\"end\">GPU {}</text>\n",
                           k_left - 8, y + k_row / 2 + 4, xml_text(summary.gpus[row].gpu));
    }
    for (const auto& record : records) {
        // A job of several GPUs gets a bar on each of their rows.
        for (const auto gpu : split(record.gpu, ',')) {
            const double y = row_of[std::string(gpu)];
            const double x = x_of(record.start);
            const double width = std::max(x_of(record.start + record.runtime) - x, 1.0);
            svg += fmt::format(
                "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\">"
                "<title>job {}: {} after {} on GPU {}\n{}</title></rect>\n",
                bar_class(record), x, y + 3, width, k_row - 6, record.seq,
                xml_text(outcome_text(record)), xml_text(seconds_text(record.runtime)),
                xml_text(record.gpu), xml_text(record.command));
            if (width >= 24) {
                svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" "
                                   "fill=\"#fff\" pointer-events=\"none\">{}</text>\n",
                                   x + width / 2, y + k_row / 2 + 4, record.seq);
            }
        }
    }
    const double legend_y = height - 12;
    svg += fmt::format("<rect class=\"ok\" x=\"{0}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{2}\" y=\"{3:.0f}\">succeeded</text>"
                       "<rect class=\"failed\" x=\"{4}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{5}\" y=\"{3:.0f}\">failed</text>"
                       "<rect class=\"killed\" x=\"{6}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{7}\" y=\"{3:.0f}\">killed by a signal</text>\n",
                       k_left, legend_y - 9, k_left + 16, legend_y, k_left + 100, k_left + 116,
                       k_left + 180, k_left + 196);
    svg += "</svg>\n";
    return svg;
}

} // namespace gpusched
