// The timeline of `gpusched report --svg`: a row per GPU, a bar per attempt, each job's
// attempts grouped and joined, and the GPU time lost to failures in the heading.
#include <gpusched/joblog_report.hpp>

#include <gpusched/split.hpp>

#include <gpusched/counted.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpusched {
namespace {

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

const char* bar_class(const JoblogRecord& record)
{
    if (record.interrupted()) {
        return "attempt interrupted"; // cut short by a stop: neither failed nor done
    }
    if (record.succeeded()) {
        return "attempt ok";
    }
    return record.signal != 0 ? "attempt killed" : "attempt failed";
}

// "2.0 s (12.5%)": a part of the GPU time.
std::string share_text(double part, double whole)
{
    return fmt::format("{} ({:.1f}%)", report_seconds(part),
                       whole > 0 ? 100.0 * part / whole : 0.0);
}

} // namespace

std::string render_timeline_svg(const std::vector<JoblogRecord>& records)
{
    const auto summary = summarize_joblog(records);
    constexpr double k_left = 110;
    constexpr double k_plot_width = 860;
    constexpr double k_top = 58;
    constexpr double k_row = 30;
    constexpr double k_bar = k_row - 6;
    // A bar stays wide enough to see and to point at; its tooltip names it.
    constexpr double k_narrowest_bar = 2;
    // A bar at least this wide carries its label ("7", or "7.2" for the second attempt).
    constexpr double k_labelled_bar = 24;
    const double span = std::max(summary.last_end - summary.first_start, 1e-3);
    const double width = k_left + k_plot_width + 30;
    const double height = k_top + k_row * static_cast<double>(summary.gpus.size()) + 60;
    const auto x_of = [&](double time) {
        return k_left + (time - summary.first_start) / span * k_plot_width;
    };

    // No height: the drawing takes its container's width and keeps its proportions.
    std::string svg = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" "
        "viewBox=\"0 0 {0:.0f} {1:.0f}\" preserveAspectRatio=\"xMinYMin meet\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n"
        "<style>.ok{{fill:#43a047}}.failed{{fill:#e53935}}.killed{{fill:#fb8c00}}.interrupted{{"
        "fill:#9e9e9e}}"
        ".attempt{{stroke:#fff;stroke-width:0.5}}.attempt:hover{{opacity:0.7}}"
        ".job:hover .attempt{{stroke:#000;stroke-width:1.5}}"
        ".retry{{fill:none;stroke:#424242;stroke-width:1.2;stroke-dasharray:4 2}}"
        ".job:hover .retry{{stroke-width:2.5}}.lost{{fill:#c62828}}"
        ".grid{{stroke:#ddd}}</style>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        "<text x=\"{2}\" y=\"20\" font-size=\"14\">{3}, {4} failed{5}, {6} over "
        "{7}</text>\n",
        width, height, k_left, counted(summary.jobs, "job"), summary.failed,
        summary.interrupted > 0 ? fmt::format(", {} interrupted", summary.interrupted) : "",
        counted(summary.attempts, "attempt"), xml_text(report_seconds(span)));
    std::string lost = fmt::format("GPU time {}", xml_text(report_seconds(summary.gpu_seconds)));
    if (summary.failed_attempts > 0) {
        lost += fmt::format(", <tspan class=\"lost\">{} lost to {}</tspan>",
                            xml_text(share_text(summary.failed_gpu_seconds, summary.gpu_seconds)),
                            counted(summary.failed_attempts, "failed attempt"));
    }
    if (summary.jobs_failed_every_attempt > 0) {
        lost += fmt::format(", {} of it on {} that failed every attempt",
                            xml_text(report_seconds(summary.never_succeeded_gpu_seconds)),
                            counted(summary.jobs_failed_every_attempt, "job"));
    }
    if (summary.interrupted_attempts > 0) {
        lost += fmt::format(", {} on {} interrupted by a stop",
                            xml_text(report_seconds(summary.interrupted_gpu_seconds)),
                            counted(summary.interrupted_attempts, "attempt"));
    }
    svg += fmt::format("<text id=\"gpu-time\" x=\"{}\" y=\"38\">{}</text>\n", k_left, lost);

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

    // Each job's attempts in one group, so that pointing at one shows them all, in log order.
    std::map<JobId, std::vector<const JoblogRecord*>> attempts_of;
    for (const auto& record : records) {
        attempts_of[record.seq].push_back(&record);
    }
    for (const auto& [job, attempts] : attempts_of) {
        svg += fmt::format("<g class=\"job\" id=\"job-{}\">\n", job);
        for (std::size_t k = 0; k < attempts.size(); ++k) {
            const auto& record = *attempts[k];
            const auto label = k == 0 ? fmt::format("{}", job) : fmt::format("{}.{}", job, k + 1);
            const double x = x_of(record.start);
            const double bar_width =
                std::max(x_of(record.start + record.runtime) - x, k_narrowest_bar);
            // A job of several GPUs gets a bar on each of their rows.
            for (const auto gpu : split(gpus_of(record), ',')) {
                const double y = row_of[std::string(gpu)];
                svg += fmt::format(
                    "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" "
                    "height=\"{:.0f}\"><title>job {}, attempt {} of {}: {} after {} on GPU "
                    "{}\n{}</title></rect>\n",
                    bar_class(record), x, y + 3, bar_width, k_bar, job, k + 1, attempts.size(),
                    xml_text(attempt_outcome(record)), xml_text(report_seconds(record.runtime)),
                    xml_text(gpus_of(record)), xml_text(record.command));
                if (bar_width >= k_labelled_bar) {
                    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" "
                                       "fill=\"#fff\" pointer-events=\"none\">{}</text>\n",
                                       x + bar_width / 2, y + k_row / 2 + 4, label);
                }
            }
            if (k == 0) {
                continue;
            }
            // An arc over the bars from the middle of the attempt before to the middle of
            // this one, row to row: it shows even where the retry starts the moment the
            // attempt before ends, on the same GPU.
            const auto& before = *attempts[k - 1];
            const auto middle = [&](const JoblogRecord& attempt) {
                const double from = x_of(attempt.start);
                return from +
                       std::max(x_of(attempt.start + attempt.runtime) - from, k_narrowest_bar) / 2;
            };
            const double x1 = middle(before);
            const double x2 = middle(record);
            const double y1 = row_of[std::string(split(gpus_of(before), ',').front())] + 3;
            const double y2 = row_of[std::string(split(gpus_of(record), ',').front())] + 3;
            constexpr double k_arc_height = 12;
            svg += fmt::format(
                "<path class=\"retry\" d=\"M{:.2f},{:.1f} C{:.2f},{:.1f} {:.2f},{:.1f} "
                "{:.2f},{:.1f}\"><title>job {}: attempt {} after {}</title></path>\n",
                x1, y1, x1, std::min(y1, y2) - k_arc_height, x2, std::min(y1, y2) - k_arc_height,
                x2, y2, job, k + 1, xml_text(attempt_outcome(before)));
        }
        svg += "</g>\n";
    }
    const double legend_y = height - 12;
    svg += fmt::format("<rect class=\"ok\" x=\"{0}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{2}\" y=\"{3:.0f}\">succeeded</text>"
                       "<rect class=\"failed\" x=\"{4}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{5}\" y=\"{3:.0f}\">failed</text>"
                       "<rect class=\"killed\" x=\"{6}\" y=\"{1:.0f}\" width=\"12\" height=\"10\"/>"
                       "<text x=\"{7}\" y=\"{3:.0f}\">killed by a signal</text>"
                       "<path class=\"retry\" d=\"M{8},{9:.0f} q9,-14 18,0\"/>"
                       "<text x=\"{10}\" y=\"{3:.0f}\">a retry of the same job (7.2: its "
                       "second attempt)</text>\n",
                       k_left, legend_y - 9, k_left + 16, legend_y, k_left + 100, k_left + 116,
                       k_left + 180, k_left + 196, k_left + 320, legend_y, k_left + 344);
    svg += "</svg>\n";
    return svg;
}

} // namespace gpusched
