#include <gpusched/memory_estimates.hpp>

#include <gpusched/memory_size.hpp>

#include <algorithm>
#include <cctype>

namespace gpusched {
namespace {

bool is_digit(char c)
{
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

} // namespace

std::string MemoryEstimates::kind_of(std::string_view command)
{
    // Digits, with a decimal point, sign or exponent among them (0.01, 1e-4), are one number.
    std::string kind;
    kind.reserve(command.size());
    for (std::size_t i = 0; i < command.size();) {
        if (!is_digit(command[i])) {
            kind += command[i++];
            continue;
        }
        while (i < command.size() &&
               (is_digit(command[i]) || command[i] == '.' ||
                ((command[i] == 'e' || command[i] == 'E') && i + 1 < command.size() &&
                 (is_digit(command[i + 1]) || command[i + 1] == '-' || command[i + 1] == '+')) ||
                ((command[i] == '-' || command[i] == '+') && i > 0 &&
                 (command[i - 1] == 'e' || command[i - 1] == 'E')))) {
            ++i;
        }
        kind += '#';
    }
    return kind;
}

void MemoryEstimates::learn(std::string_view command, std::uint64_t peak)
{
    if (peak == 0) {
        return;
    }
    auto& known = m_peaks[kind_of(command)];
    known = std::max(known, peak);
}

std::optional<std::uint64_t> MemoryEstimates::estimate(std::string_view command) const
{
    const auto found = m_peaks.find(kind_of(command));
    if (found == m_peaks.end()) {
        return std::nullopt;
    }
    return std::min(found->second + found->second / 5, k_most_job_memory);
}

} // namespace gpusched
