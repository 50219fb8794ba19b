#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpusched {

// --mem auto: what a job needs, estimated from the peaks earlier jobs of its kind were seen to
// use. A job's kind is its command with every number in it made one placeholder, so that a
// sweep's jobs (the same command with other values: `train.py --batch 64 --seed 3`) are one
// kind, and a command of other words another.
//
// Where one of the kind's numbers explains its peaks (a batch size, a width: the peaks lie
// close to a line through that number's values, R² at least k_explained), a job is estimated
// from its own value of it: the line at that value, raised by the most any peak seen lay above
// the line; beyond the values seen, never less than the peak of the nearest one. Where none
// does (a seed, a learning rate), the estimate is the highest peak of the kind. Either way a
// fifth more is added as a margin (a look a second can miss a short spike). A kind never seen
// is unknown, and its job has a GPU to itself until one of its kind has ended.
//
// Pure: the peaks are handed in (Placement's ledger), and the rule is tested in-process.
class MemoryEstimates {
public:
    // How well a number must explain the peaks (the coefficient of determination of the
    // line), and on how many distinct values of it, before it is trusted.
    static constexpr double k_explained = 0.9;
    static constexpr std::size_t k_values_to_explain = 4;
    // The peaks kept of each kind, the latest: enough for a sweep, bounded for a long run.
    static constexpr std::size_t k_peaks_kept = 1024;
    // The numbers of a command looked at for a line, its first: a sweep's values are few, and
    // a command of a thousand numbers costs no more to learn from.
    static constexpr std::size_t k_numbers_looked_at = 16;

    static std::string kind_of(std::string_view command);
    // The numbers kind_of makes placeholders, in order (one that is not finite as 0), the
    // first k_numbers_looked_at of them.
    static std::vector<double> numbers_of(std::string_view command);

    // A job of `command` ended having used `peak` bytes at most on one of its GPUs (0: no
    // look saw it use any, which teaches nothing).
    void learn(std::string_view command, std::uint64_t peak);
    std::optional<std::uint64_t> estimate(std::string_view command) const;

private:
    struct Seen {
        std::vector<double> numbers;
        double peak = 0;
    };
    // The line through the peaks by the number at `position`: peak = intercept + slope * x.
    struct Line {
        std::size_t position = 0;
        double intercept = 0;
        double slope = 0;
        double fit = 0;   // its coefficient of determination
        double above = 0; // the most a peak seen lay above the line
        double lowest_value = 0;
        double highest_value = 0;
        double peak_at_lowest = 0; // the highest peak seen at the lowest value, and the highest
        double peak_at_highest = 0;
    };
    struct Kind {
        std::uint64_t highest = 0;
        std::vector<Seen> seen; // the latest k_peaks_kept, oldest first
        std::optional<Line> line;
    };
    static std::optional<Line> explaining_line(const std::vector<Seen>& seen);
    static std::optional<Line> line_of(const std::vector<Seen>& seen, std::size_t position);

    std::unordered_map<std::string, Kind> m_kinds;
};

} // namespace gpusched
