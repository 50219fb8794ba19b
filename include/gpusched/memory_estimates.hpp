#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gpusched {

// --mem auto: what a job needs, estimated from the peaks earlier jobs of its kind were seen to
// use. A job's kind is its command with every number in it made one placeholder, so that a
// sweep's jobs (the same command with other values: `train.py --lr 0.01 --seed 3`) are one
// kind, and a command of other words another. The estimate is the highest peak of the kind
// with a fifth more as a margin (a look a second can miss a short spike); a kind never seen is
// unknown, and its job has a GPU to itself until one of its kind has ended.
//
// Pure: the peaks are handed in (Placement's ledger), and the rule is tested in-process.
class MemoryEstimates {
public:
    static std::string kind_of(std::string_view command);

    // A job of `command` ended having used `peak` bytes at most on one of its GPUs (0: no
    // look saw it use any, which teaches nothing).
    void learn(std::string_view command, std::uint64_t peak);
    std::optional<std::uint64_t> estimate(std::string_view command) const;

private:
    std::unordered_map<std::string, std::uint64_t> m_peaks; // by kind
};

} // namespace gpusched
