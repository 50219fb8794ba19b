#include <gpusched/memory_estimates.hpp>

#include <gpusched/memory_size.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>

namespace gpusched {
namespace {

bool is_digit(char c)
{
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Where the number that begins at `begin` (a digit) ends: digits, with a decimal point, or an
// exponent and its sign, among them (0.01, 1e-4) are one number.
std::size_t number_end(std::string_view command, std::size_t begin)
{
    auto i = begin;
    while (i < command.size() &&
           (is_digit(command[i]) || command[i] == '.' ||
            ((command[i] == 'e' || command[i] == 'E') && i + 1 < command.size() &&
             (is_digit(command[i + 1]) || command[i + 1] == '-' || command[i + 1] == '+')) ||
            ((command[i] == '-' || command[i] == '+') && i > 0 &&
             (command[i - 1] == 'e' || command[i - 1] == 'E')))) {
        ++i;
    }
    return i;
}

} // namespace

std::string MemoryEstimates::kind_of(std::string_view command)
{
    std::string kind;
    kind.reserve(command.size());
    for (std::size_t i = 0; i < command.size();) {
        if (!is_digit(command[i])) {
            kind += command[i++];
            continue;
        }
        i = number_end(command, i);
        kind += '#';
    }
    return kind;
}

std::vector<double> MemoryEstimates::numbers_of(std::string_view command)
{
    std::vector<double> numbers;
    for (std::size_t i = 0; i < command.size();) {
        if (!is_digit(command[i])) {
            ++i;
            continue;
        }
        const auto end = number_end(command, i);
        // What reads as a number of it (1.2 of a version's 1.2.3): each job's alike.
        double value = 0;
        std::from_chars(command.data() + i, command.data() + end, value);
        numbers.push_back(std::isfinite(value) ? value : 0);
        if (numbers.size() == k_numbers_looked_at) {
            break;
        }
        i = end;
    }
    return numbers;
}

void MemoryEstimates::learn(std::string_view command, std::uint64_t peak)
{
    if (peak == 0) {
        return;
    }
    auto& kind = m_kinds[kind_of(command)];
    kind.highest = std::max(kind.highest, peak);
    if (kind.seen.size() == k_peaks_kept) {
        kind.seen.erase(kind.seen.begin());
    }
    auto numbers = numbers_of(command);
    // One kind's commands have as many numbers, but for a '#' of their own, which the kind
    // cannot tell from a number: a line is drawn only through commands of as many.
    if (!kind.seen.empty() && kind.seen.front().numbers.size() != numbers.size()) {
        return;
    }
    kind.seen.push_back({std::move(numbers), static_cast<double>(peak)});
    kind.line = explaining_line(kind.seen);
}

std::optional<MemoryEstimates::Line> MemoryEstimates::line_of(const std::vector<Seen>& seen,
                                                              std::size_t position)
{
    std::set<double> values;
    double mean_x = 0;
    double mean_peak = 0;
    for (const auto& one : seen) {
        values.insert(one.numbers[position]);
        mean_x += one.numbers[position];
        mean_peak += one.peak;
    }
    if (values.size() < k_values_to_explain) {
        return std::nullopt;
    }
    const auto count = static_cast<double>(seen.size());
    mean_x /= count;
    mean_peak /= count;
    double sxx = 0;
    double sxy = 0;
    double syy = 0;
    for (const auto& one : seen) {
        const auto dx = one.numbers[position] - mean_x;
        const auto dy = one.peak - mean_peak;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    // Peaks all alike need no line (the highest is each one's); nor does a line a number
    // explains no better than k_explained.
    // (Numbers so huge that a sum overflows explain nothing either.)
    const auto fit = (sxy * sxy) / (sxx * syy);
    if (!(sxx > 0 && syy > 0 && fit >= k_explained && std::isfinite(sxx * syy))) {
        return std::nullopt;
    }
    Line line;
    line.position = position;
    line.fit = fit;
    line.slope = sxy / sxx;
    line.intercept = mean_peak - line.slope * mean_x;
    if (!std::isfinite(line.slope) || !std::isfinite(line.intercept)) {
        return std::nullopt;
    }
    line.lowest_value = *values.begin();
    line.highest_value = *values.rbegin();
    for (const auto& one : seen) {
        const auto x = one.numbers[position];
        line.above = std::max(line.above, one.peak - (line.intercept + line.slope * x));
        if (x == line.lowest_value) {
            line.peak_at_lowest = std::max(line.peak_at_lowest, one.peak);
        }
        if (x == line.highest_value) {
            line.peak_at_highest = std::max(line.peak_at_highest, one.peak);
        }
    }
    return line;
}

std::optional<MemoryEstimates::Line> MemoryEstimates::explaining_line(const std::vector<Seen>& seen)
{
    // The number whose line fits best, where one fits well enough. (A kind's jobs have as many
    // numbers each: they are its placeholders.)
    std::optional<Line> best;
    for (std::size_t position = 0; position < seen.front().numbers.size(); ++position) {
        const auto line = line_of(seen, position);
        if (line && (!best || line->fit > best->fit)) {
            best = line;
        }
    }
    return best;
}

std::optional<std::uint64_t> MemoryEstimates::estimate(std::string_view command) const
{
    const auto found = m_kinds.find(kind_of(command));
    if (found == m_kinds.end()) {
        return std::nullopt;
    }
    const auto& kind = found->second;
    double need = static_cast<double>(kind.highest);
    if (kind.line) {
        const auto& line = *kind.line;
        const auto numbers = numbers_of(command);
        // A command of the kind with a '#' of its own has other numbers: the highest peak.
        const bool alike = numbers.size() == kind.seen.front().numbers.size();
        const auto x = alike ? numbers[line.position] : 0;
        need = alike ? line.intercept + line.slope * x + line.above
                     : static_cast<double>(kind.highest);
        // Beyond the values seen the line is a guess: no less than the nearest one used.
        if (std::isnan(need)) {
            need = static_cast<double>(kind.highest);
        } else if (x < line.lowest_value) {
            need = std::max(need, line.peak_at_lowest);
        } else if (x > line.highest_value) {
            need = std::max(need, line.peak_at_highest);
        }
    }
    const auto most = static_cast<double>(k_most_job_memory);
    const auto bytes = static_cast<std::uint64_t>(std::round(std::clamp(need, 1.0, most)));
    return std::min(bytes + bytes / 5, k_most_job_memory);
}

} // namespace gpusched
