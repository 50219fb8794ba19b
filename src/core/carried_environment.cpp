#include <gpusched/carried_environment.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpusched {
namespace {

std::string_view name_of(std::string_view variable)
{
    return variable.substr(0, std::min(variable.find('='), variable.size()));
}

bool is_picked_by(std::string_view variable, std::string_view entry)
{
    const auto name = name_of(variable);
    if (entry.ends_with('*')) {
        return name.starts_with(entry.substr(0, entry.size() - 1));
    }
    return name == entry;
}

} // namespace

std::vector<std::string> carried_environment(const std::vector<std::string>& environment,
                                             const EnvironmentChoice& choice)
{
    std::vector<std::string> set;    // NAME=VALUE entries, carried as given
    std::vector<std::string> picked; // NAME and PREFIX* entries
    for (const auto& entry : choice.named) {
        (entry.find('=') != std::string::npos ? set : picked).push_back(entry);
    }
    const auto is_set = [&set](std::string_view variable) {
        return std::any_of(set.begin(), set.end(), [&](const std::string& entry) {
            return name_of(entry) == name_of(variable);
        });
    };
    std::vector<std::string> carried;
    for (const auto& variable : environment) {
        const bool wanted = choice.whole || std::any_of(picked.begin(), picked.end(),
                                                        [&](const std::string& entry) {
                                                            return is_picked_by(variable, entry);
                                                        });
        if (wanted && !is_set(variable)) {
            carried.push_back(variable);
        }
    }
    // The last NAME=VALUE of a name wins, as in `env A=1 A=2`.
    for (auto entry = set.begin(); entry != set.end(); ++entry) {
        const bool set_again = std::any_of(entry + 1, set.end(), [&](const std::string& later) {
            return name_of(later) == name_of(*entry);
        });
        if (!set_again) {
            carried.push_back(*entry);
        }
    }
    return carried;
}

std::string environment_entry_error(std::string_view entry)
{
    const auto name = name_of(entry);
    const bool prefix = entry.find('=') == std::string_view::npos && name.ends_with('*');
    const auto letters = prefix ? name.substr(0, name.size() - 1) : name;
    const bool valid = !letters.empty() &&
                       std::isdigit(static_cast<unsigned char>(letters.front())) == 0 &&
                       std::all_of(letters.begin(), letters.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                       });
    if (valid) {
        return {};
    }
    return fmt::format("'{}' is not a variable to carry: NAME, PREFIX* or NAME=VALUE, where a "
                       "name is letters, digits and _, not starting with a digit",
                       entry);
}

} // namespace gpusched
