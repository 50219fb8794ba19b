#include <gpusched/nearest_name.hpp>

#include <algorithm>
#include <limits>

namespace gpusched {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    // Three rows of the table: a swap of neighbours looks two rows back.
    std::vector<std::size_t> before(b.size() + 1);
    std::vector<std::size_t> previous(b.size() + 1);
    std::vector<std::size_t> current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        previous[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t changed = a[i - 1] == b[j - 1] ? 0 : 1;
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + changed});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                current[j] = std::min(current[j], before[j - 2] + 1);
            }
        }
        before.swap(previous);
        previous.swap(current);
    }
    return previous[b.size()];
}

std::optional<std::string> nearest_name(std::string_view wrong,
                                        const std::vector<std::string>& names)
{
    // Dashes are not letters the user chose: `--gpu` is three letters long, not five.
    const auto letters = wrong.substr(std::min(wrong.find_first_not_of('-'), wrong.size()));
    // No slip in a letter or two (-x is no typo of -q), one in a short word, two in a longer
    // one; beyond that a guess misleads.
    const std::size_t most = letters.size() <= 2 ? 0 : letters.size() <= 4 ? 1 : 2;
    std::optional<std::string> nearest;
    std::size_t nearest_distance = std::numeric_limits<std::size_t>::max();
    for (const auto& name : names) {
        const auto distance = edit_distance(wrong, name);
        if (distance <= most && distance < nearest_distance) {
            nearest = name;
            nearest_distance = distance;
        }
    }
    if (nearest || letters.size() < 3) {
        return nearest;
    }
    // `--gpus-per` for `--gpus-per-job`: an abbreviation, if it abbreviates only one name.
    std::optional<std::string> started;
    for (const auto& name : names) {
        if (name.starts_with(wrong)) {
            if (started) {
                return std::nullopt;
            }
            started = name;
        }
    }
    return started;
}

} // namespace gpusched
